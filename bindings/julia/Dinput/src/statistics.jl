# Per-stage statistics and traces (docs/statistics.md): JSON documents as Julia strings.

# Options(statistics=..., trace_events=...): on by default; a trace of up to trace_events events.
function _set_statistics_options(o, statistics, trace_events)
    if statistics !== nothing
        check(LibDinput.dinput_options_set_statistics(o, statistics))
    end
    if trace_events !== nothing
        check(LibDinput.dinput_options_set_trace(o, trace_events))
    end
    return o
end

# Options(ram_budget=...): the most bytes the AUTOTUNE buffers of each iterator may hold
# (docs/autotune.md); 0 or nothing: half of the physical memory.
function _set_autotune_options(o, ram_budget)
    if ram_budget !== nothing
        check(LibDinput.dinput_options_set_ram_budget(o, ram_budget))
    end
    return o
end

# Runs f(out) for a string the library returns, copies it and frees it.
function _take_string(f)
    out = Ref{Ptr{UInt8}}(C_NULL)
    status = f(out)
    text = out[] == C_NULL ? "" : unsafe_string(out[])
    LibDinput.dinput_string_free(out[])
    check(status)
    return text
end

"""
    statistics(it::DatasetIterator) -> String

The iterator's per-stage statistics so far, a JSON document (schema "dinput.statistics/1").
"""
statistics(it::DatasetIterator) = _take_string(o -> LibDinput.dinput_iterator_statistics(o, it))

"""
    statistics(it::DistributedIterator; all_workers=false) -> String

This worker's statistics, or with `all_workers` every worker's gathered through the
collective (then every worker calls it at the same point).
"""
statistics(it::DistributedIterator; all_workers::Bool=false) =
    _take_string(o -> LibDinput.dinput_dist_iterator_statistics(o, it, all_workers))

"""
    trace(it) -> String

The iterator's trace in the Trace Event JSON format (Perfetto, chrome://tracing); no slices
unless `Options(trace_events=N)` asked for them.
"""
trace(it::DatasetIterator) = _take_string(o -> LibDinput.dinput_iterator_trace(o, it))
trace(it::DistributedIterator) = _take_string(o -> LibDinput.dinput_dist_iterator_trace(o, it))
