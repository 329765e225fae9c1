#!/usr/bin/env node
// check_syntax.mjs — parses Julia files with the tree-sitter Julia grammar and fails on any
// syntax error, so that the binding is checked where Julia itself cannot run.
//
// tree-sitter recovers from errors by inserting ERROR nodes (text it could not fit) and
// MISSING nodes (tokens it had to invent, such as a closing `]`); a file is accepted only
// if its tree has neither. One gap of the grammar is closed here: it reads `end` and `begin`
// as identifiers (they are, inside `a[end]`), so a stray `end` would parse; such an
// identifier outside an index expression is reported too. The grammar is a parser, not
// Julia: this proves the files parse, not that they load.
//
// Usage:
//   node check_syntax.mjs FILE.jl...     report every error; exit 1 if there is one; a
//                                        Markdown file (.md, .md.txt) stands for its
//                                        ```julia blocks, each parsed on its own, and must
//                                        have at least one
//   node check_syntax.mjs --self-test    built-in broken snippets must be rejected and a
//                                        valid one (using the constructs of the binding)
//                                        accepted; exit 1 otherwise
// Needs web-tree-sitter and tree-sitter-julia (package.json next to this script).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Parser, Language } from 'web-tree-sitter';

const require = createRequire(import.meta.url);

async function makeParser() {
  await Parser.init();
  const julia = await Language.load(require.resolve('tree-sitter-julia/tree-sitter-julia.wasm'));
  const parser = new Parser();
  parser.setLanguage(julia);
  return parser;
}

// Every ERROR and MISSING node of the tree, and every stray `end`/`begin`, as
// "line:column: what".
function syntaxErrors(parser, source) {
  const tree = parser.parse(source);
  const errors = [];
  const at = (node) => `${node.startPosition.row + 1}:${node.startPosition.column + 1}`;
  const visit = (node, inIndex) => {
    if (node.isMissing) {
      errors.push(`${at(node)}: missing ${JSON.stringify(node.type)}`);
    } else if (node.type === 'ERROR') {
      errors.push(`${at(node)}: syntax error near ${JSON.stringify(node.text.split('\n')[0].slice(0, 60))}`);
    } else if (node.type === 'identifier' && !inIndex && (node.text === 'end' || node.text === 'begin')) {
      errors.push(`${at(node)}: stray "${node.text}" (no block or index for it)`);
    }
    const index = inIndex || node.type === 'index_expression';
    for (const child of node.children) visit(child, index);
  };
  visit(tree.rootNode, false);
  tree.delete();
  return errors;
}

const BROKEN = {
  'unclosed function': 'function f(x)\n    return x + 1\n',
  'unbalanced parenthesis': 'f(x = (1 + 2\ny = 3\n',
  'unclosed vector': 'x = [1, 2\n',
  'stray end': 'function f()\n    1\nend\nend\n',
  'unclosed struct': 'struct A\n    x::Int\n',
  'bad call syntax': 'ccall((:f, lib), Cint, (Cint,) x)\n',
  'unclosed string': 'msg = "never closed\n',
};

// Constructs the binding relies on; the grammar must accept them.
const VALID = `
module M
using Libdl
const libx = get(ENV, "X", "libx")
abstract type Handle end
mutable struct T <: Handle
    ptr::Ptr{Cvoid}
    function T(ptr::Ptr{Cvoid})
        t = new(ptr)
        finalizer(close, t)
        return t
    end
end
Base.Array{S}(t::T) where {S} = S[]
f(x; k::Union{Nothing,Int}=nothing) = x === nothing ? 0 : x
macro m(target, rettype, argtypes, args...)
    body = Expr(:block)
    push!(body.args, :(Base.GC.@preserve $(args...) begin end))
    return esc(body)
end
g() = @cfunction(h, Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}))  # dinput_map_fn
r = ccall((:name, libx), Cint, (Ptr{Cvoid},), C_NULL)
s = _guard("what") do
    value, st.state = (1, 2)
    return 0x0b
end
try
    error("boom")
catch err
    msg = sprint(showerror, err)
finally
    nothing
end
for (i, v) in zip(1:2, 3:4)
    @assert i < v "\$i"
    w = [i, v][end]
    z = (1:3)[begin:end-1]
end
"""docstring with \`code\` and \$(interpolation)"""
h(a::AbstractArray{T,N}) where {T<:Real,N} = permutedims(a, ntuple(i -> N + 1 - i, N))
end
`;

async function selfTest() {
  const parser = await makeParser();
  let failed = 0;
  for (const [what, source] of Object.entries(BROKEN)) {
    const errors = syntaxErrors(parser, source);
    const ok = errors.length > 0;
    console.log(`${ok ? 'ok  ' : 'FAIL'} broken snippet (${what}) is rejected${ok ? ': ' + errors[0] : ''}`);
    if (!ok) failed++;
  }
  const errors = syntaxErrors(parser, VALID);
  console.log(`${errors.length ? 'FAIL' : 'ok  '} valid snippet is accepted${errors.length ? ': ' + errors.join('; ') : ''}`);
  if (errors.length) failed++;
  console.log(failed ? `self-test: ${failed} case(s) FAILED` : 'self-test: the checker rejects broken Julia and accepts valid Julia');
  return failed === 0;
}

// The ```julia blocks of a Markdown text (indented ones too, as inside a list item), each
// with the line its code starts on and its indentation removed.
function juliaBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^( *)```julia\s*$/);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j]); j++) {
      body.push(lines[j].slice(Math.min(indent, lines[j].search(/\S|$/))));
    }
    blocks.push({ line: i + 2, source: body.join('\n') + '\n' });
    i = j;
  }
  return blocks;
}

// The errors of one file: a .jl file as a whole, a Markdown file block by block (with the
// README's line numbers).
function fileErrors(parser, file) {
  const text = fs.readFileSync(file, 'utf8');
  if (!/\.md(\.txt)?$/.test(file)) return syntaxErrors(parser, text);
  const blocks = juliaBlocks(text);
  if (blocks.length === 0) return ['1:1: no ```julia block'];
  return blocks.flatMap((b) => syntaxErrors(parser, b.source).map((e) => {
    const [row, rest] = [parseInt(e, 10), e.slice(e.indexOf(':'))];
    return `${b.line + row - 1}${rest}`;
  }));
}

async function main(argv) {
  if (argv[0] === '--self-test') return (await selfTest()) ? 0 : 1;
  if (argv.length === 0) {
    console.error('usage: node check_syntax.mjs FILE.jl...   |   node check_syntax.mjs --self-test');
    return 2;
  }
  const parser = await makeParser();
  let bad = 0;
  for (const file of argv) {
    const errors = fileErrors(parser, file);
    for (const e of errors) console.log(`${file}:${e}`);
    if (errors.length) bad++;
  }
  console.log(bad ? `syntax check FAILED: ${bad} of ${argv.length} file(s) have errors`
                  : `syntax check passed: ${argv.length} file(s) parse without ERROR or MISSING nodes`);
  return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
