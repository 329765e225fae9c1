# Errors: dinput's status codes as Julia exceptions.

"""
    DinputError(code::Symbol, message::String)

An error reported by dinput. `code` is the name of the status code, one of TensorFlow's
canonical codes: `:CANCELLED`, `:UNKNOWN`, `:INVALID_ARGUMENT`, `:DEADLINE_EXCEEDED`,
`:NOT_FOUND`, `:ALREADY_EXISTS`, `:PERMISSION_DENIED`, `:RESOURCE_EXHAUSTED`,
`:FAILED_PRECONDITION`, `:ABORTED`, `:OUT_OF_RANGE` (end of data), `:UNIMPLEMENTED`,
`:INTERNAL`, `:UNAVAILABLE`, `:DATA_LOSS`, `:UNAUTHENTICATED`. `message` is the library's
message, which names the function, argument, file or offset at fault.

```julia
try
    batch(Dataset(0:5), 0)
catch err
    err isa DinputError && err.code == :INVALID_ARGUMENT
end
```
"""
struct DinputError <: Exception
    code::Symbol
    message::String
end

Base.showerror(io::IO, e::DinputError) = print(io, "DinputError(:", e.code, "): ", e.message)

const STATUS_CODES = Dict{Symbol,Cint}(
    :OK => LibDinput.DINPUT_OK,
    :CANCELLED => LibDinput.DINPUT_CANCELLED,
    :UNKNOWN => LibDinput.DINPUT_UNKNOWN,
    :INVALID_ARGUMENT => LibDinput.DINPUT_INVALID_ARGUMENT,
    :DEADLINE_EXCEEDED => LibDinput.DINPUT_DEADLINE_EXCEEDED,
    :NOT_FOUND => LibDinput.DINPUT_NOT_FOUND,
    :ALREADY_EXISTS => LibDinput.DINPUT_ALREADY_EXISTS,
    :PERMISSION_DENIED => LibDinput.DINPUT_PERMISSION_DENIED,
    :RESOURCE_EXHAUSTED => LibDinput.DINPUT_RESOURCE_EXHAUSTED,
    :FAILED_PRECONDITION => LibDinput.DINPUT_FAILED_PRECONDITION,
    :ABORTED => LibDinput.DINPUT_ABORTED,
    :OUT_OF_RANGE => LibDinput.DINPUT_OUT_OF_RANGE,
    :UNIMPLEMENTED => LibDinput.DINPUT_UNIMPLEMENTED,
    :INTERNAL => LibDinput.DINPUT_INTERNAL,
    :UNAVAILABLE => LibDinput.DINPUT_UNAVAILABLE,
    :DATA_LOSS => LibDinput.DINPUT_DATA_LOSS,
    :UNAUTHENTICATED => LibDinput.DINPUT_UNAUTHENTICATED,
)

"""
    Dinput.status_code(name::Symbol) -> Cint

The numeric status code called `name` (`:OK`, `:INVALID_ARGUMENT`, ...).
"""
function status_code(name::Symbol)
    return get(STATUS_CODES, name) do
        throw(ArgumentError("unknown dinput status code :$name; expected one of " *
                            join(sort!(collect(keys(STATUS_CODES))), ", ")))
    end
end

"""
    Dinput.status_name(code::Integer) -> Symbol

The name of a status code as the library spells it (`:INVALID_ARGUMENT`; `:UNKNOWN_STATUS`
for values it does not know).
"""
status_name(code::Integer) = Symbol(_cstring(LibDinput.dinput_status_name(code)))

# A static or borrowed C string as a String ("" for NULL).
_cstring(p::Ptr{UInt8}) = p == C_NULL ? "" : unsafe_string(p)

# Throws the DinputError of a failing status. Call it right after the failing call: the
# message is the calling thread's, valid until its next dinput call.
@inline check(status::Cint) = status == LibDinput.DINPUT_OK ? nothing : _throw_status(status)

@noinline _throw_status(status::Cint) = throw(_status_error(status))

function _status_error(status::Cint)
    # Copy the message before any other dinput call (status_name is one). Nothing between
    # the failing call and here yields, so this task is still on the thread that made it.
    message = _cstring(LibDinput.dinput_last_error_message())
    return DinputError(status_name(status), message)
end
