"""The common base of every object that owns a C handle."""


class Handle:
    """Owns one C handle, released by `_free` exactly once: by `close()`, by leaving a `with`
    block, or when the object is collected. Using a closed object raises ValueError."""

    _free = None  # the C function that releases the handle, set by subclasses
    _kind = "object"

    def __init__(self, handle):
        self._h = handle

    def close(self):
        """Releases the handle (idempotent). Objects made from this one keep what they need."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            type(self)._free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the module globals may be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return not getattr(self, "_h", None)

    def _handle(self):
        h = getattr(self, "_h", None)
        if not h:
            raise ValueError("dinput: the %s is closed" % self._kind)
        return h
