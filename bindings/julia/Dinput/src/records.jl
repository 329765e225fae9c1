# Writing TFRecord files (read them back with `records`).

"""
    RecordWriter(path; compression=:none, level=0, zstd_window_log=0)
    RecordWriter(f, path; compression=:none, level=0, zstd_window_log=0)

Starts a TFRecord file that TensorFlow and [`records`](@ref) read. The records go to a
temporary file beside `path`, renamed over it when the writer closes: a file already at
`path` keeps its contents until then, and after any failure or [`discard`](@ref).
`compression` is `:none`, `:zstd` or `:gzip`; `level` the zstd (1–19) or gzip (1–9) level,
0 for the default; `zstd_window_log` (zstd only, 10–31) a larger window with long-distance
matching, as `zstd --long=N` writes (0: the level's window). `write(w, data)` appends one record (a `String` or bytes); `close(w)`
finishes the file and throws if that fails, so close explicitly: the finalizer also closes,
but cannot report errors. The form with `f` calls `f(w)` and closes `w` afterwards; if `f`
throws, the file is discarded instead, so an existing `path` is left as it was.

```julia
RecordWriter("data.tfrecord") do w
    write(w, "first record")
    write(w, UInt8[1, 2, 3])
end
```

Not thread-safe: one task writes at a time.
"""
mutable struct RecordWriter <: Handle
    ptr::Ptr{Cvoid}
    function RecordWriter(ptr::Ptr{Cvoid})
        w = new(ptr)
        finalizer(_finalize, w)
        return w
    end
end

_free(::RecordWriter, p::Ptr{Cvoid}) = LibDinput.dinput_record_writer_free(p)

function RecordWriter(path::AbstractString; compression::Symbol=:none, level::Integer=0,
                      zstd_window_log::Integer=0)
    code = _compression_code(compression)
    return _with_option_handle(LibDinput.dinput_record_writer_options_new,
                               LibDinput.dinput_record_writer_options_free) do opts
        check(LibDinput.dinput_record_writer_options_set_compression(opts, code))
        check(LibDinput.dinput_record_writer_options_set_level(opts, level))
        check(LibDinput.dinput_record_writer_options_set_zstd_window_log(opts, zstd_window_log))
        RecordWriter(_out(o -> LibDinput.dinput_record_writer_open(o, path, opts)))
    end
end

function RecordWriter(f::Function, path::AbstractString; kwargs...)
    w = RecordWriter(path; kwargs...)
    try
        result = f(w)
        close(w)
        return result
    catch
        discard(w)
        rethrow()
    end
end

"""
    discard(w::RecordWriter)

Abandons the file: the temporary is removed and `path` keeps what it held before; then
releases the writer. Later writes throw `:FAILED_PRECONDITION`; `close` does nothing.
"""
function discard(w::RecordWriter)
    p = w.ptr
    p == C_NULL && return nothing
    w.ptr = C_NULL
    status = LibDinput.dinput_record_writer_discard(p)
    LibDinput.dinput_record_writer_free(p)
    status == LibDinput.DINPUT_OK || throw(_status_error(status))
    return nothing
end

"""
    write(w::RecordWriter, data) -> Int

Appends one record holding `data` (an `AbstractString` or an `AbstractVector{UInt8}`);
returns its length in bytes.
"""
Base.write(w::RecordWriter, data::String) = _write_record(w, data)
Base.write(w::RecordWriter, data::Vector{UInt8}) = _write_record(w, data)
Base.write(w::RecordWriter, data::AbstractString) = _write_record(w, String(data))
Base.write(w::RecordWriter, data::AbstractVector{UInt8}) = _write_record(w, Vector{UInt8}(data))

function _write_record(w::RecordWriter, data::Union{String,Vector{UInt8}})
    GC.@preserve data begin
        check(LibDinput.dinput_record_writer_write(w, pointer(data), sizeof(data)))
    end
    return sizeof(data)
end

"""
    flush(w::RecordWriter)

Pushes buffered records to the file (a compressed stream stays open for more).
"""
Base.flush(w::RecordWriter) = check(LibDinput.dinput_record_writer_flush(w))

"""
    close(w::RecordWriter)

Finishes the file (the end of a compressed stream) and closes it, throwing a `DinputError`
if that fails; then releases the writer. Closing twice is allowed.
"""
function Base.close(w::RecordWriter)
    p = w.ptr
    p == C_NULL && return nothing
    w.ptr = C_NULL
    status = LibDinput.dinput_record_writer_close(p)
    err = status == LibDinput.DINPUT_OK ? nothing : _status_error(status)
    LibDinput.dinput_record_writer_free(p)
    err === nothing || throw(err)
    return nothing
end
