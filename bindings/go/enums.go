package dinput

// Range checks of the enum-typed values the binding passes to C. The library is C++ and
// reads these arguments as its enum types; a value outside an enum's range is undefined
// behaviour there (UBSan aborts on it), so values that Go's integer types allow but the
// enums do not are rejected (or mapped) in Go.

func (c Code) valid() bool            { return c >= OK && c <= Unauthenticated }
func (d DType) valid() bool           { return d >= InvalidDType && d <= Bytes }
func (p AutoShardPolicy) valid() bool { return p >= AutoShardOff && p <= AutoShardHint }
func (m ReplicationMode) valid() bool { return m == ReplicationPerWorker || m == ReplicationPerReplica }
func (op ReduceOp) valid() bool       { return op == ReduceSum || op == ReduceMean }
