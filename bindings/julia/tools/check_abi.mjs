#!/usr/bin/env node
// check_abi.mjs — checks the Julia binding against the C header, without Julia.
//
// Julia cannot run where the binding is built, so nothing would notice a wrapper whose
// argument types drifted from include/dinput.h (or include/dinput_cuda.h) until it crashed a
// user's process. This script reads both sides and compares them:
//
//   * every DINPUT_API function has exactly one `ccall(@fptr(:name), Ret, (Args...), ...)`
//     (or `@gcsafe_ccall(...)`, the binding's GC-safe variant with the same shape) whose
//     return type, argument count and argument types map from the C declaration, and whose
//     call passes as many values as it declares types;
//   * no ccall names a dinput function with a library, `ccall((:name, lib), ...)`: that form
//     binds the library when the package is precompiled, whereas the binding opens it at
//     load time and calls through the pointers `@fptr` reads;
//   * every `@cfunction(f, Ret, (Args...))` carries a trailing `# dinput_xxx_fn` comment naming
//     the callback typedef it implements, its signature matches that typedef, and every
//     callback typedef of the header is implemented;
//   * every enumerator and numeric #define of the header is a Julia `const` with the same value.
//
// Type mapping (C -> Julia): void -> Cvoid; int -> Cint; int64_t -> Int64; size_t -> Csize_t;
// double -> Cdouble/Float64; float -> Cfloat/Float32; enums -> Cint; T* -> Ptr{T'} with opaque
// structs as Cvoid; function pointers -> Ptr{Cvoid}; const char* -> Cstring or Ptr{UInt8}
// (Cstring only where the chars are const: C never writes through it); CUDA's cudaStream_t
// and cudaEvent_t (pointers to opaque structs) -> Ptr{Cvoid}, so the binding needs no CUDA.
//
// Usage (the headers are the arguments ending in .h; they are read as one):
//   node check_abi.mjs HEADER.h... FILE.jl...     check; exit 1 listing every mismatch
//   node check_abi.mjs --self-test [HEADER.h... FILE.jl...]
//       prove the checker catches broken wrappers: synthetic cases, and (given files) the
//       real binding with deliberate mutations, each of which must add the expected error.
import fs from 'node:fs';
import path from 'node:path';

// Callback typedefs the package deliberately implements no trampoline for, with the reason.
const NOT_IMPLEMENTED = new Map([
  ['dinput_thread_launcher_fn',
   "Julia's threads are a fixed pool: a thread body, which blocks for the life of a pipeline, " +
   'would take one of them away. The library starts its own threads, which Julia >= 1.9 adopts ' +
   'when a callback arrives on them.'],
]);

// ---------------------------------------------------------------------------------------
// C header
// ---------------------------------------------------------------------------------------

const blank = (s) => s.replace(/[^\n]/g, ' ');

function parseHeader(text) {
  const defines = new Map();
  for (const m of text.matchAll(/^[ \t]*#[ \t]*define[ \t]+(DINPUT_\w+)[ \t]+([^\n]*)$/gm)) {
    const value = m[2].replace(/\/\*.*?\*\//g, '').trim().replace(/^\((.*)\)$/, '$1').trim();
    if (/^-?\d+$/.test(value)) defines.set(m[1], BigInt(value));
  }
  let code = text.replace(/\/\*[\s\S]*?\*\//g, blank).replace(/\/\/[^\n]*/g, '');
  code = code.replace(/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, blank);
  code = code.replace(/extern\s+"C"\s*\{/g, '').replace(/^\s*\}\s*$/gm, '');
  // Structs with fields (`typedef struct tag { ... } name;`): their fields are checked
  // against the Julia struct of the same name, and a pointer to one is Ptr{name}.
  const structs = new Map();
  code = code.replace(/typedef\s+struct\s+(\w+)\s*\{([^}]*)\}\s*(\w+)\s*;/g, (all, tag, body, name) => {
    const fields = body.split(';').map((f) => f.replace(/\s+/g, ' ').trim()).filter(Boolean)
      .map((f) => splitParams(f)[0]);
    structs.set(name, fields);
    structs.set('struct ' + tag, fields);
    return blank(all);
  });

  const enums = new Set();
  const enumerators = new Map();
  const opaque = new Set();
  const fnptrs = new Map();
  const functions = new Map();
  const problems = [];
  for (let stmt of code.split(';')) {
    stmt = stmt.replace(/\s+/g, ' ').trim();
    if (!stmt) continue;
    let m;
    // `typedef enum tag {...} name` or `typedef DINPUT_ENUM(tag) {...} name` (an int-based
    // enum in C++): a Julia Cint either way.
    if ((m = stmt.match(/^typedef (?:enum (\w+ )?|\w*ENUM ?\( ?(\w+) ?\) )\{(.*)\} (\w+)$/))) {
      enums.add(m[4]);
      const tag = (m[1] || m[2] || '').trim();
      if (tag) enums.add('enum ' + tag);
      let next = 0n;
      for (let item of m[3].split(',')) {
        item = item.trim();
        if (!item) continue;
        const [name, value] = item.split('=').map((s) => s.trim());
        const v = value === undefined ? next : BigInt(value.replace(/^\((.*)\)$/, '$1'));
        enumerators.set(name, v);
        next = v + 1n;
      }
    } else if ((m = stmt.match(/^typedef struct (\w+) (\w+)$/))) {
      opaque.add(m[2]);
      opaque.add('struct ' + m[1]);
    } else if ((m = stmt.match(/^struct (\w+)$/))) {
      opaque.add('struct ' + m[1]);
    } else if ((m = stmt.match(/^typedef (.+?)\( ?\* ?(\w+) ?\) ?\((.*)\)$/))) {
      fnptrs.set(m[2], { ret: m[1].trim(), params: splitParams(m[3]) });
    } else if ((m = stmt.match(/^DINPUT_API (.+?)\(? ?\b(\w+) ?\((.*)\)$/))) {
      if (functions.has(m[2])) problems.push(`header declares ${m[2]} twice`);
      functions.set(m[2], { ret: m[1].trim(), params: splitParams(m[3]) });
    } else if (/\bDINPUT_API\b/.test(stmt)) {
      problems.push(`cannot parse header declaration: ${stmt}`);
    }
  }
  return { defines, enums, enumerators, opaque, structs, fnptrs, functions, problems };
}

function splitTopLevel(s, sep = ',') {
  const parts = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    if (ch === sep && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim());
}

// "const int64_t *shape" -> "const int64_t *"; "void" alone -> no parameters.
function splitParams(s) {
  const params = splitTopLevel(s);
  if (params.length === 1 && (params[0] === 'void' || params[0] === '')) return [];
  return params.map((p) => {
    const tokens = p.match(/\w+|\*/g) || [];
    const last = tokens[tokens.length - 1];
    const named = tokens.length > 1 && /^\w+$/.test(last) && !['const'].includes(last);
    return { type: (named ? tokens.slice(0, -1) : tokens).join(' '), name: named ? last : '' };
  });
}

// The Julia spellings a C type may have, as a set of normalized strings.
// CUDA's handle types of dinput_cuda.h: pointers to opaque driver structs.
const CUDA_HANDLES = new Set(['cudaStream_t', 'cudaEvent_t']);

function juliaTypesFor(ctype, hdr) {
  const tokens = ctype.match(/\w+|\*/g) || [];
  const depth = tokens.filter((t) => t === '*').length;
  const firstStar = tokens.indexOf('*');
  const baseTokens = (firstStar < 0 ? tokens : tokens.slice(0, firstStar));
  const baseConst = baseTokens.includes('const');
  const baseWords = baseTokens.filter((t) => t !== 'const');
  const base = baseWords.join(' ');
  const scalar = {
    void: ['Cvoid'], int: ['Cint'], int64_t: ['Int64'], size_t: ['Csize_t'],
    double: ['Cdouble', 'Float64'], float: ['Cfloat', 'Float32'], int32_t: ['Int32'],
    uint32_t: ['UInt32'], uint64_t: ['UInt64'], uint8_t: ['UInt8'], int8_t: ['Int8'],
    uint16_t: ['UInt16'], int16_t: ['Int16'],
  };
  let inner;
  let levels = depth;
  if (base === 'char') {
    if (depth === 0) return new Set(['Cchar']);
    inner = ['Ptr{UInt8}', 'Ptr{Cchar}'].concat(baseConst ? ['Cstring'] : []);
    levels = depth - 1;
  } else if (hdr.fnptrs.has(base)) {
    inner = ['Ptr{Cvoid}'];
  } else if (hdr.enums.has(base)) {
    inner = ['Cint'];
  } else if (hdr.structs.has(base)) {
    const name = base.replace(/^struct /, '');
    if (depth === 0) return new Set([name]);
    inner = [name];
  } else if (hdr.opaque.has(base)) {
    if (depth === 0) return new Set([`<by-value opaque ${base}>`]);
    inner = ['Cvoid'];
  } else if (scalar[base]) {
    inner = scalar[base];
  } else if (CUDA_HANDLES.has(base)) {
    inner = ['Ptr{Cvoid}'];
  } else {
    return new Set([`<unknown C type ${ctype}>`]);
  }
  for (let i = 0; i < levels; i++) inner = inner.map((t) => `Ptr{${t}}`);
  return new Set(inner);
}

// ---------------------------------------------------------------------------------------
// Julia sources
// ---------------------------------------------------------------------------------------

// Blanks out comments and string/char literals (keeping offsets and newlines), so that
// documentation mentioning ccall is not mistaken for code. `$(...)` inside a string is code
// that may hold strings of its own; it is skipped with its nesting.
function stripJulia(src) {
  const n = src.length;
  let out = '';
  // Index after the string opened at i (delim `"` or `"""`), honouring escapes and `$(...)`.
  const stringEnd = (i, delim) => {
    i += delim.length;
    while (i < n && !src.startsWith(delim, i)) {
      if (src[i] === '\\') i += 2;
      else if (src[i] === '$' && src[i + 1] === '(') i = codeEnd(i + 2);
      else i++;
    }
    return Math.min(n, i + delim.length);
  };
  // Index after the `close` that ends code starting at i (used for interpolations).
  const codeEnd = (i) => {
    let depth = 0;
    while (i < n) {
      const c = src[i];
      if (c === '"') { i = stringEnd(i, src.startsWith('"""', i) ? '"""' : '"'); continue; }
      if (c === '(') depth++;
      else if (c === ')') { if (depth === 0) return i + 1; depth--; }
      i++;
    }
    return n;
  };
  let i = 0;
  let prev = '';
  while (i < n) {
    const c = src[i];
    if (c === '#' && src[i + 1] === '=') {
      let depth = 0;
      const start = i;
      while (i < n) {
        if (src[i] === '#' && src[i + 1] === '=') { depth++; i += 2; continue; }
        if (src[i] === '=' && src[i + 1] === '#') { depth--; i += 2; if (depth === 0) break; continue; }
        i++;
      }
      out += blank(src.slice(start, i));
      continue;
    }
    if (c === '#') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out += blank(src.slice(i, stop));
      i = stop;
      continue;
    }
    if (c === '"') {
      const end = stringEnd(i, src.startsWith('"""', i) ? '"""' : '"');
      out += '"' + blank(src.slice(i + 1, end - 1)) + '"';
      i = end;
      prev = '"';
      continue;
    }
    if (c === "'" && !/[\w)\]}'.]/.test(prev)) {
      const m = src.slice(i, i + 12).match(/^'(?:\\.[^']*|[^'\\])'/);
      if (m) {
        out += "'" + blank(m[0].slice(1, -1)) + "'";
        i += m[0].length;
        prev = "'";
        continue;
      }
    }
    out += c;
    if (!/\s/.test(c)) prev = c;
    i++;
  }
  return out;
}

// From the '(' at `open`, the top-level arguments and the offset after the ')'.
function callArgs(code, open) {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) {
      depth--;
      if (depth === 0) return { args: splitTopLevel(code.slice(open + 1, i)), end: i + 1 };
    }
  }
  return null;
}

const normType = (t) => t.replace(/\s+/g, '').replace(/\bNothing\b/g, 'Cvoid');

function tupleItems(expr) {
  const e = expr.trim();
  if (!e.startsWith('(') || !e.endsWith(')')) return null;
  const inner = e.slice(1, -1).trim();
  if (inner === '') return [];
  const items = splitTopLevel(inner);
  if (items[items.length - 1] === '') items.pop();
  return items;
}

function lineOf(text, offset) {
  return text.slice(0, offset).split('\n').length;
}

function scanJulia(files) {
  const structs = [];
  const ccalls = [];
  const cfunctions = [];
  const constants = [];
  const problems = [];
  for (const { name, text } of files) {
    const code = stripJulia(text);
    for (const m of code.matchAll(/(@gcsafe_ccall|\bccall)\s*\(/g)) {
      const open = m.index + m[0].length - 1;
      const where = `${name}:${lineOf(code, m.index)}`;
      const parsed = callArgs(code, open);
      if (!parsed) { problems.push(`${where}: unbalanced ${m[1]}(`); continue; }
      const [target, ret, types, ...values] = parsed.args;
      if (/^:dinput_/.test(target || '')) {
        problems.push(`${where}: ${m[1]} of ${target} without the library: use @fptr(${target})`);
        continue;
      }
      const bound = (target || '').match(/^\(\s*:(dinput_\w+)\s*,([\s\S]*)\)$/);
      if (bound) {
        problems.push(`${where}: ${bound[1]} binds its library (${bound[2].trim()}) when the package is precompiled: use @fptr(:${bound[1]})`);
        continue;
      }
      const t = (target || '').match(/^@fptr\s*\(\s*:(\w+)\s*\)$/);
      if (!t || !t[1].startsWith('dinput_')) continue; // libjulia or other function-pointer calls
      const items = tupleItems(types || '');
      if (!items) { problems.push(`${where}: ${t[1]}: argument types must be a literal tuple`); continue; }
      ccalls.push({ where, form: m[1], fn: t[1], ret: normType(ret || ''), types: items.map(normType), nvalues: values.length });
    }
    for (const m of code.matchAll(/@cfunction\s*\(/g)) {
      const open = m.index + m[0].length - 1;
      const where = `${name}:${lineOf(code, m.index)}`;
      const parsed = callArgs(code, open);
      if (!parsed) { problems.push(`${where}: unbalanced @cfunction(`); continue; }
      const lineEnd = text.indexOf('\n', parsed.end);
      const rest = text.slice(parsed.end, lineEnd < 0 ? text.length : lineEnd);
      const marker = rest.match(/#\s*(dinput_\w+)/);
      const items = tupleItems(parsed.args[2] || '');
      cfunctions.push({ where, typedef: marker ? marker[1] : null, ret: normType(parsed.args[1] || ''), types: items ? items.map(normType) : null });
    }
    for (const m of code.matchAll(/^[ \t]*struct[ \t]+(dinput_\w+)[ \t]*\n([\s\S]*?)^[ \t]*end\b/gm)) {
      const where = `${name}:${lineOf(code, m.index)}`;
      const fields = m[2].split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
        const f = l.match(/^(\w+)\s*::\s*(.+)$/);
        return f ? { name: f[1], type: normType(f[2]) } : { name: l, type: null };
      });
      structs.push({ where, name: m[1], fields });
    }
    for (const m of code.matchAll(/^[ \t]*const[ \t]+(DINPUT_\w+)[ \t]*=[ \t]*([^\n]+)$/gm)) {
      const where = `${name}:${lineOf(code, m.index)}`;
      const v = m[2].trim().match(/^(?:\w+\()?\s*(-?\s*\d+)\s*\)?$/);
      constants.push({ where, name: m[1], value: v ? BigInt(v[1].replace(/\s+/g, '')) : null, expr: m[2].trim() });
    }
  }
  return { ccalls, cfunctions, constants, structs, problems };
}

// ---------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------

function compare(hdr, jl) {
  const problems = [...hdr.problems, ...jl.problems];
  const byFn = new Map();
  for (const c of jl.ccalls) {
    if (!byFn.has(c.fn)) byFn.set(c.fn, []);
    byFn.get(c.fn).push(c);
  }
  const showSet = (s) => [...s].join(' or ');
  const checkSig = (label, decl, ret, types) => {
    const errs = [];
    const rets = juliaTypesFor(decl.ret, hdr);
    if (!rets.has(ret)) errs.push(`${label}: return type ${ret}, expected ${showSet(rets)} (C: ${decl.ret})`);
    if (types.length !== decl.params.length) {
      errs.push(`${label}: ${types.length} argument type(s), expected ${decl.params.length} (C: ${decl.params.map((p) => p.type).join(', ') || 'void'})`);
    } else {
      decl.params.forEach((p, i) => {
        const ok = juliaTypesFor(p.type, hdr);
        if (!ok.has(types[i])) errs.push(`${label}: argument ${i + 1} (${p.name || '?'}) is ${types[i]}, expected ${showSet(ok)} (C: ${p.type})`);
      });
    }
    return errs;
  };

  for (const [fn, decl] of hdr.functions) {
    const calls = byFn.get(fn) || [];
    if (calls.length === 0) { problems.push(`${fn}: no ccall wrapper`); continue; }
    if (calls.length > 1) problems.push(`${fn}: ${calls.length} ccall wrappers (${calls.map((c) => c.where).join(', ')}); expected exactly one`);
    for (const c of calls) {
      problems.push(...checkSig(`${c.where}: ${fn}`, decl, c.ret, c.types));
      if (c.nvalues !== c.types.length) problems.push(`${c.where}: ${fn} declares ${c.types.length} argument type(s) but passes ${c.nvalues} value(s)`);
    }
  }
  for (const [fn, calls] of byFn) {
    if (!hdr.functions.has(fn)) problems.push(`${calls[0].where}: ccall of ${fn}, which the headers do not declare`);
  }

  const implemented = new Set();
  for (const cf of jl.cfunctions) {
    if (!cf.typedef) { problems.push(`${cf.where}: @cfunction without a trailing "# dinput_xxx_fn" comment naming its C typedef`); continue; }
    const decl = hdr.fnptrs.get(cf.typedef);
    if (!decl) { problems.push(`${cf.where}: @cfunction names ${cf.typedef}, which is not a callback typedef of the header`); continue; }
    if (!cf.types) { problems.push(`${cf.where}: @cfunction argument types must be a literal tuple`); continue; }
    implemented.add(cf.typedef);
    problems.push(...checkSig(`${cf.where}: @cfunction for ${cf.typedef}`, decl, cf.ret, cf.types));
  }
  // A typedef that the library passes to a callback (the state writer a generator's save
  // callback is given) is the library's function, called from Julia with ccall: no
  // trampoline implements it.
  const passedIn = new Set();
  for (const decl of hdr.fnptrs.values()) {
    for (const p of decl.params) if (hdr.fnptrs.has(p.type)) passedIn.add(p.type);
  }
  for (const name of hdr.fnptrs.keys()) {
    if (!implemented.has(name) && !passedIn.has(name) && !NOT_IMPLEMENTED.has(name)) problems.push(`${name}: callback typedef without a @cfunction trampoline`);
  }
  for (const name of NOT_IMPLEMENTED.keys()) {
    if (implemented.has(name)) problems.push(`${name}: has a @cfunction trampoline, so NOT_IMPLEMENTED should no longer list it`);
  }

  for (const [cname, fields] of hdr.structs) {
    if (cname.startsWith('struct ')) continue;
    const defs = jl.structs.filter((d) => d.name === cname);
    if (defs.length !== 1) { problems.push(`${cname}: ${defs.length} Julia struct definitions; expected exactly one`); continue; }
    const d = defs[0];
    if (d.fields.length !== fields.length) {
      problems.push(`${d.where}: struct ${cname} has ${d.fields.length} field(s), the header ${fields.length} (${fields.map((f) => f.name).join(', ')})`);
      continue;
    }
    fields.forEach((f, i) => {
      const ok = juliaTypesFor(f.type, hdr);
      const j = d.fields[i];
      if (j.name !== f.name) problems.push(`${d.where}: struct ${cname} field ${i + 1} is ${j.name}, the header's is ${f.name}`);
      else if (!ok.has(j.type)) problems.push(`${d.where}: struct ${cname} field ${f.name} is ${j.type}, expected ${showSet(ok)} (C: ${f.type})`);
    });
  }

  const expected = new Map([...hdr.enumerators, ...hdr.defines]);
  const seen = new Map();
  for (const c of jl.constants) {
    if (seen.has(c.name)) { problems.push(`${c.where}: constant ${c.name} defined again (first at ${seen.get(c.name)})`); continue; }
    seen.set(c.name, c.where);
    if (!expected.has(c.name)) { problems.push(`${c.where}: constant ${c.name} is not in the header`); continue; }
    if (c.value === null) problems.push(`${c.where}: constant ${c.name} = ${c.expr} is not an integer literal`);
    else if (c.value !== expected.get(c.name)) problems.push(`${c.where}: constant ${c.name} = ${c.value}, the header says ${expected.get(c.name)}`);
  }
  for (const name of expected.keys()) {
    if (!seen.has(name)) problems.push(`${name}: header constant without a Julia const`);
  }
  return {
    problems,
    summary: `${hdr.functions.size} functions, ${hdr.fnptrs.size} callback typedefs, ${expected.size} constants`,
  };
}

function check(headerText, files) {
  return compare(parseHeader(headerText), scanJulia(files));
}

// ---------------------------------------------------------------------------------------
// Self-test: the checker must reject deliberately wrong wrappers
// ---------------------------------------------------------------------------------------

const MINI_HEADER = `
#define DINPUT_API
#define DINPUT_UNKNOWN_DIM (-1)
typedef enum dinput_status_t { DINPUT_OK = 0, DINPUT_UNKNOWN = 2 } dinput_status_t;
#define DINPUT_ENUM(name) enum name
typedef DINPUT_ENUM(dinput_mode_t) {
  DINPUT_MODE_A = 4, /* implicit values follow */
  DINPUT_MODE_B
} dinput_mode_t;
typedef struct dinput_thing dinput_thing_t;
struct DLManagedTensor;
typedef struct dinput_info {
  const dinput_thing_t *thing;
  int64_t size;
  dinput_mode_t mode;
} dinput_info_t;
typedef dinput_status_t (*dinput_cb_fn)(dinput_thing_t **out, const char *name, void *user_data);
/* Makes a thing. */
DINPUT_API dinput_status_t dinput_thing_new(dinput_thing_t **out, int64_t size,
                                            const char *const *names, size_t count);
DINPUT_API const char *dinput_thing_name(const dinput_thing_t *thing, int i);
DINPUT_API void dinput_thing_free(dinput_thing_t *thing);
DINPUT_API dinput_mode_t dinput_thing_mode(const dinput_thing_t *thing, dinput_mode_t fallback);
DINPUT_API dinput_status_t dinput_thing_export(struct DLManagedTensor **out, dinput_cb_fn fn);
DINPUT_API cudaEvent_t dinput_thing_wait(const dinput_thing_t *thing, cudaStream_t stream);
DINPUT_API dinput_status_t dinput_thing_infos(dinput_info_t *infos, size_t capacity);
`;

const MINI_JULIA = `
const DINPUT_UNKNOWN_DIM = -1
const DINPUT_OK = Cint(0)
const DINPUT_UNKNOWN = Cint(2)
const DINPUT_MODE_A = Cint(4)
const DINPUT_MODE_B = Cint(5)
# ccall(@fptr(:dinput_thing_free), Cint, ()) in a comment is ignored
msg = "x: $(join(["a", "b"], ", ")) ccall(@fptr(:dinput_thing_free), Cint, ())"
#= a block comment: ccall(@fptr(:dinput_thing_free), Cint, ()) =#
"""docstring: ccall(@fptr(:dinput_thing_free), Cint, ())"""
dinput_thing_new(out, size, names, count) =
    ccall(@fptr(:dinput_thing_new), Cint, (Ptr{Ptr{Cvoid}}, Int64, Ptr{Cstring}, Csize_t),
          out, size, names, count)
dinput_thing_name(thing, i) = ccall(@fptr(:dinput_thing_name), Cstring, (Ptr{Cvoid}, Cint), thing, i)
dinput_thing_free(thing) = @gcsafe_ccall(@fptr(:dinput_thing_free), Cvoid, (Ptr{Cvoid},), thing)
dinput_thing_mode(thing, fallback) = ccall(@fptr(:dinput_thing_mode), Cint, (Ptr{Cvoid}, Cint), thing, fallback)
dinput_thing_export(out, fn) = ccall(@fptr(:dinput_thing_export), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, fn)
dinput_thing_wait(thing, stream) = ccall(@fptr(:dinput_thing_wait), Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}), thing, stream)
cb() = @cfunction(_cb, Cint, (Ptr{Ptr{Cvoid}}, Cstring, Ptr{Cvoid}))  # dinput_cb_fn
struct dinput_info_t
    thing::Ptr{Cvoid}
    size::Int64
    mode::Cint
end
dinput_thing_infos(infos, capacity) = ccall(@fptr(:dinput_thing_infos), Cint, (Ptr{dinput_info_t}, Csize_t), infos, capacity)
`;

// Each mutation of MINI_JULIA and the error it must produce.
const MINI_CASES = [
  ['wrong argument type', (s) => s.replace('Int64, Ptr{Cstring}', 'Cint, Ptr{Cstring}'), /dinput_thing_new: argument 2 \(size\) is Cint, expected Int64/],
  ['wrong return type', (s) => s.replace('Cstring, (Ptr{Cvoid}, Cint)', 'Cint, (Ptr{Cvoid}, Cint)'), /dinput_thing_name: return type Cint/],
  ['missing argument', (s) => s.replace('(Ptr{Cvoid}, Cint), thing, i', '(Ptr{Cvoid},), thing'), /dinput_thing_name: 1 argument type\(s\), expected 2/],
  ['extra argument', (s) => s.replace('(Ptr{Cvoid},), thing)', '(Ptr{Cvoid}, Cint), thing, 0)'), /dinput_thing_free: 2 argument type\(s\), expected 1/],
  ['values and types disagree', (s) => s.replace('Ptr{Cvoid}), out, fn)', 'Ptr{Cvoid}), out)'), /dinput_thing_export declares 2 argument type\(s\) but passes 1/],
  ['missing wrapper', (s) => s.replace(/dinput_thing_free\(thing\) = .*\n/, ''), /dinput_thing_free: no ccall wrapper/],
  ['duplicate wrapper', (s) => s + 'again(t) = ccall(@fptr(:dinput_thing_free), Cvoid, (Ptr{Cvoid},), t)\n', /dinput_thing_free: 2 ccall wrappers/],
  ['unknown function', (s) => s + 'f() = ccall(@fptr(:dinput_nope), Cvoid, ())\n', /ccall of dinput_nope, which the headers do not declare/],
  ['library bound at precompile time', (s) => s.replace('@gcsafe_ccall(@fptr(:dinput_thing_free)', '@gcsafe_ccall((:dinput_thing_free, libdinput)'), /dinput_thing_free binds its library \(libdinput\) when the package is precompiled/],
  ['library bound at precompile time (ccall)', (s) => s.replace('ccall(@fptr(:dinput_thing_mode)', 'ccall((:dinput_thing_mode, "libdinput.so.0")'), /dinput_thing_mode binds its library/],
  ['Cstring for an output', (s) => s.replace('(Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, fn', '(Ptr{Cstring}, Ptr{Cvoid}), out, fn'), /dinput_thing_export: argument 1 \(out\) is Ptr\{Cstring\}/],
  ['opaque handle passed as an integer', (s) => s.replace('(Ptr{Cvoid},), thing)', '(Csize_t,), thing)'), /argument 1 \(thing\) is Csize_t, expected Ptr\{Cvoid\}/],
  ['callback signature', (s) => s.replace('(Ptr{Ptr{Cvoid}}, Cstring, Ptr{Cvoid}))', '(Ptr{Ptr{Cvoid}}, Ptr{Cvoid}))'), /@cfunction for dinput_cb_fn: 2 argument type\(s\), expected 3/],
  ['callback without marker', (s) => s.replace('  # dinput_cb_fn', ''), /without a trailing "# dinput_xxx_fn" comment/],
  ['missing callback', (s) => s.replace(/cb\(\) = .*\n/, ''), /dinput_cb_fn: callback typedef without a @cfunction/],
  ['wrong constant', (s) => s.replace('DINPUT_UNKNOWN = Cint(2)', 'DINPUT_UNKNOWN = Cint(3)'), /DINPUT_UNKNOWN = 3, the header says 2/],
  ['implicit enumerator value', (s) => s.replace('DINPUT_MODE_B = Cint(5)', 'DINPUT_MODE_B = Cint(1)'), /DINPUT_MODE_B = 1, the header says 5/],
  ['enum passed as Int64', (s) => s.replace('(Ptr{Cvoid}, Cint), thing, fallback', '(Ptr{Cvoid}, Int64), thing, fallback'), /dinput_thing_mode: argument 2 \(fallback\) is Int64, expected Cint/],
  ['missing constant', (s) => s.replace('const DINPUT_UNKNOWN_DIM = -1\n', ''), /DINPUT_UNKNOWN_DIM: header constant without a Julia const/],
  ['CUDA stream passed as an integer', (s) => s.replace('(Ptr{Cvoid}, Ptr{Cvoid}), thing, stream', '(Ptr{Cvoid}, Csize_t), thing, stream'), /dinput_thing_wait: argument 2 \(stream\) is Csize_t, expected Ptr\{Cvoid\}/],
  ['struct field of the wrong type', (s) => s.replace('size::Int64', 'size::Cint'), /struct dinput_info_t field size is Cint, expected Int64/],
  ['struct field missing', (s) => s.replace('    mode::Cint\n', ''), /struct dinput_info_t has 2 field\(s\), the header 3/],
  ['struct fields reordered', (s) => s.replace('    size::Int64\n    mode::Cint', '    mode::Cint\n    size::Int64'), /field 2 is mode, the header's is size/],
  ['struct without a Julia definition', (s) => s.replace('struct dinput_info_t', 'struct other_info_t'), /dinput_info_t: 0 Julia struct definitions/],
  ['struct pointer passed as Ptr{Cvoid}', (s) => s.replace('(Ptr{dinput_info_t}, Csize_t)', '(Ptr{Cvoid}, Csize_t)'), /dinput_thing_infos: argument 1 \(infos\) is Ptr\{Cvoid\}, expected Ptr\{dinput_info_t\}/],
  ['CUDA event returned as an integer', (s) => s.replace('Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}), thing, stream', 'UInt, (Ptr{Cvoid}, Ptr{Cvoid}), thing, stream'), /dinput_thing_wait: return type UInt, expected Ptr\{Cvoid\}/],
];

// Mutations of the real binding: [description, mutate, expected error].
const REAL_CASES = [
  ['dinput_dataset_batch takes Cint for the int64_t batch size',
    (src) => src.replace(/(@fptr\(:dinput_dataset_batch\),\s*Cint,\s*\(Ptr\{Ptr\{Cvoid\}\},\s*Ptr\{Cvoid\},\s*)Int64/, '$1Cint'),
    /dinput_dataset_batch: argument 3 \(batch_size\) is Cint, expected Int64/],
  ['dinput_tensor_free wrapper removed',
    (src) => src.replace(/ccall\(@fptr\(:dinput_tensor_free\)/, 'ccall(@fptr(:dinput_tensor_free_removed)'),
    /dinput_tensor_free: no ccall wrapper/],
  ['dinput_iterator_get_next loses its out-parameter',
    (src) => src.replace(/(@fptr\(:dinput_iterator_get_next\),\s*Cint,\s*\()Ptr\{Ptr\{Cvoid\}\},\s*/, '$1'),
    /dinput_iterator_get_next: 1 argument type\(s\), expected 2/],
  ['map trampoline declared with a missing argument',
    (src) => src.replace(/(@cfunction\(\s*\w+,\s*Cint,\s*\()Ptr\{Ptr\{Cvoid\}\},\s*(Ptr\{Cvoid\},\s*Ptr\{Cvoid\}\)\)\s*# dinput_map_fn)/, '$1$2'),
    /@cfunction for dinput_map_fn: 2 argument type\(s\), expected 3/],
  ['dinput_tensor_cuda_wait (dinput_cuda.h) takes the stream as an integer',
    (src) => src.replace(/(@fptr\(:dinput_tensor_cuda_wait\),\s*Cint,\s*\(Ptr\{Cvoid\},\s*)Ptr\{Cvoid\}/, '$1UInt'),
    /dinput_tensor_cuda_wait: argument 2 \(stream\) is UInt, expected Ptr\{Cvoid\}/],
  ['dinput_dataset_shuffle goes back to a library fixed at precompile time',
    (src) => src.replace(/ccall\(@fptr\(:dinput_dataset_shuffle\)/, 'ccall((:dinput_dataset_shuffle, libdinput)'),
    /dinput_dataset_shuffle binds its library \(libdinput\) when the package is precompiled/],
  ['DINPUT_OUT_OF_RANGE with a wrong value',
    (src) => src.replace(/(const DINPUT_OUT_OF_RANGE = Cint\()11\)/, '$112)'),
    /DINPUT_OUT_OF_RANGE = 12, the header says 11/],
];

function selfTest(headerText, files) {
  let failed = 0;
  const report = (ok, what, detail) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ': ' + detail : ''}`);
    if (!ok) failed++;
  };
  const mini = (jl) => check(MINI_HEADER, [{ name: 'mini.jl', text: jl }]).problems;
  const base = mini(MINI_JULIA);
  report(base.length === 0, 'synthetic binding passes', base.join('; '));
  for (const [what, mutate, expect] of MINI_CASES) {
    const mutated = mutate(MINI_JULIA);
    if (mutated === MINI_JULIA) { report(false, `synthetic: ${what}`, 'mutation did not apply'); continue; }
    const errs = mini(mutated);
    report(errs.some((e) => expect.test(e)), `synthetic: ${what} is caught`, errs.find((e) => expect.test(e)) || `got: ${errs.join('; ') || 'no error'}`);
  }
  if (headerText) {
    const baseline = new Set(check(headerText, files).problems);
    for (const [what, mutate, expect] of REAL_CASES) {
      let applied = false;
      const mutatedFiles = files.map((f) => {
        if (applied) return f;
        const text = mutate(f.text);
        if (text !== f.text) { applied = true; return { name: f.name, text }; }
        return f;
      });
      if (!applied) { report(false, `binding: ${what}`, 'mutation did not apply (wrapper not found)'); continue; }
      const added = check(headerText, mutatedFiles).problems.filter((e) => !baseline.has(e));
      report(added.some((e) => expect.test(e)), `binding: ${what} is caught`, added.find((e) => expect.test(e)) || `new errors: ${added.join('; ') || 'none'}`);
    }
  }
  console.log(failed ? `self-test: ${failed} case(s) FAILED` : 'self-test: the checker rejects every broken wrapper');
  return failed === 0;
}

// ---------------------------------------------------------------------------------------

function main(argv) {
  const selftest = argv[0] === '--self-test';
  const rest = selftest ? argv.slice(1) : argv;
  if (!selftest && rest.length < 2) {
    console.error('usage: node check_abi.mjs HEADER.h... FILE.jl...   |   node check_abi.mjs --self-test [HEADER.h... FILE.jl...]');
    return 2;
  }
  const headerPaths = rest.filter((p) => p.endsWith('.h'));
  const jlPaths = rest.filter((p) => !p.endsWith('.h'));
  const files = jlPaths.map((p) => ({ name: path.relative(process.cwd(), p) || p, text: fs.readFileSync(p, 'utf8') }));
  // The headers are parsed as one text: dinput_cuda.h uses the types of dinput.h.
  const headerText = headerPaths.map((p) => fs.readFileSync(p, 'utf8')).join('\n');
  if (selftest) return selfTest(headerText, files) ? 0 : 1;
  if (!headerPaths.length || !files.length) {
    console.error('check_abi.mjs: give at least one header (.h) and one Julia file');
    return 2;
  }
  const { problems, summary } = check(headerText, files);
  for (const p of problems) console.log(p);
  if (problems.length) {
    console.log(`ABI check FAILED: ${problems.length} problem(s) (${summary})`);
    return 1;
  }
  console.log(`ABI check passed: ${summary} match ${files.length} Julia file(s)`);
  return 0;
}

// Run as a script; check_names.mjs imports stripJulia from here.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  process.exitCode = main(process.argv.slice(2));
}

export { stripJulia };
