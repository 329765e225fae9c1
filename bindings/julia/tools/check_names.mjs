#!/usr/bin/env node
// check_names.mjs — checks, without Julia, that the names the package exports and the names
// its test suite and README use exist in the package.
//
// Julia cannot run where the binding is built, so a renamed function (say `run` becoming
// `strategy_run`) whose old name lingers in test/runtests.jl or the README would go unseen
// until a user runs `Pkg.test()`. This script reads the sources (comments and strings
// blanked, as check_abi.mjs does) and reports:
//   * an exported name that src/ does not define;
//   * a qualified `Dinput.name` or `Dinput.LibDinput.name` (in src/, the tests or the
//     README's julia blocks) that src/ does not define;
//   * an unqualified call `name(...)` in the tests or the README of a name that src/ defines
//     but does not export, when the caller does not define it itself and it is not a Base
//     function that Dinput extends or leaves alone (such a call is an UndefVarError);
//   * a test file without a `@testset`, or a src/ file that the package never includes.
// What it cannot see: calls of Base functions with arguments of the wrong meaning, names
// of Base or other packages, and anything about types; that is the Julia test suite's job.
//
// Usage: node check_names.mjs PACKAGE_DIR [README.md]
//        node check_names.mjs --self-test PACKAGE_DIR [README.md]
//            the real package must pass, and deliberate mutations of it must be reported.
import fs from 'node:fs';
import path from 'node:path';
import { stripJulia } from './check_abi.mjs';

const IDENT = '[A-Za-z_][A-Za-z0-9_!]*';
const END = '(?![A-Za-z0-9_!])';

// Names a file defines at any level: functions (long and short form), macros, types,
// modules, constants and globals, and `function name end` declarations.
function definitions(code) {
  const names = new Set();
  const patterns = [
    new RegExp(`^[ \\t]*function[ \\t]+(${IDENT})${END}`, 'gm'),
    new RegExp(`^[ \\t]*macro[ \\t]+(${IDENT})${END}`, 'gm'),
    new RegExp(`^[ \\t]*(?:mutable[ \\t]+)?struct[ \\t]+(${IDENT})${END}`, 'gm'),
    new RegExp(`^[ \\t]*abstract[ \\t]+type[ \\t]+(${IDENT})${END}`, 'gm'),
    new RegExp(`^[ \\t]*module[ \\t]+(${IDENT})${END}`, 'gm'),
    new RegExp(`^[ \\t]*(?:const[ \\t]+)?(${IDENT})[ \\t]*(?:::[^=\\n]+)?=(?!=)`, 'gm'),
    // short-form methods: name(args) = ... / name(args) where {T} = ...
    new RegExp(`^[ \\t]*(${IDENT})(?:\\{[^}\\n]*\\})?\\((?:[^()\\n]|\\([^()\\n]*\\))*\\)(?:[ \\t]*::[^=\\n]+?)?(?:[ \\t]*where[^=\\n]*)?[ \\t]*=(?!=)`, 'gm'),
    // tuple assignments and for-loop variables: (a, b) = ..., for (i, x) in
    new RegExp(`\\b(?:for|local|global)[ \\t]+(${IDENT})${END}`, 'gm'),
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) names.add(m[1]);
  // the @eval'd function-pointer slots of libdinput.jl: `<function>_ptr`
  return names;
}

// `export a, b,\n    c` lists.
function exportsOf(code) {
  const names = new Set();
  for (const m of code.matchAll(/^[ \t]*export[ \t]+((?:[^\n]*,[ \t]*\n)*[^\n]*)/gm)) {
    for (const n of m[1].split(/[\s,]+/)) if (n) names.add(n);
  }
  return names;
}

// Base functions that src/ extends (`Base.name(...) =` / `function Base.name`).
function baseExtensions(code) {
  const names = new Set();
  for (const m of code.matchAll(new RegExp(`(?:function[ \\t]+|^[ \\t]*)(?:Base|Random)\\.(${IDENT})`, 'gm'))) names.add(m[1]);
  return names;
}

// The julia code blocks of a Markdown file, everything else blanked (lines kept).
function juliaBlocks(markdown) {
  let out = '';
  let last = 0;
  for (const m of markdown.matchAll(/```julia\n([\s\S]*?)```/g)) {
    const start = m.index + m[0].indexOf('\n') + 1;
    out += markdown.slice(last, start).replace(/[^\n]/g, ' ') + m[1];
    last = start + m[1].length;
  }
  return out + markdown.slice(last).replace(/[^\n]/g, ' ');
}

function lineOf(text, offset) {
  return text.slice(0, offset).split('\n').length;
}

// Functions of Base that Dinput declares as its own (unexported) names: an unqualified call
// in user code is Base's and fine.
const BASE_NAMES_SHADOWED = new Set(['skip', 'enumerate']);

function check(pkgDir, files) {
  const problems = [];
  const src = files.filter((f) => f.name.includes(`${path.sep}src${path.sep}`) || f.name.startsWith('src/'));
  const users = files.filter((f) => !src.includes(f));
  const srcCode = src.map((f) => ({ ...f, code: stripJulia(f.text) }));
  const defined = new Set();
  const exported = new Set();
  const extended = new Set();
  for (const f of srcCode) {
    for (const n of definitions(f.code)) defined.add(n);
    for (const n of exportsOf(f.code)) exported.add(n);
    for (const n of baseExtensions(f.code)) extended.add(n);
  }
  // libdinput.jl @evals one `<function>_ptr` slot per wrapped function
  for (const f of srcCode) for (const m of f.code.matchAll(/@fptr\(:(\w+)\)/g)) defined.add(`${m[1]}_ptr`);

  for (const n of exported) if (!defined.has(n)) problems.push(`exported name ${n} is not defined in src/`);

  const included = new Set();
  for (const f of srcCode) for (const m of f.text.matchAll(/^[ \t]*include\("([^"]+)"\)/gm)) included.add(m[1]);
  for (const f of src) {
    const base = path.basename(f.name);
    if (base !== 'Dinput.jl' && !included.has(base)) problems.push(`${f.name}: never included by the package`);
  }

  const qualified = (f, code) => {
    for (const m of code.matchAll(new RegExp(`\\bDinput\\.(?:LibDinput\\.)?(${IDENT})`, 'g'))) {
      if (!defined.has(m[1])) problems.push(`${f.name}:${lineOf(code, m.index)}: Dinput has no ${m[0].replace(/^Dinput\./, '')}`);
    }
  };
  for (const f of srcCode) qualified(f, f.code);

  for (const f of users) {
    const code = f.name.endsWith('.md') ? stripJulia(juliaBlocks(f.text)) : stripJulia(f.text);
    if (f.name.endsWith('runtests.jl') && !/@testset\b/.test(code)) problems.push(`${f.name}: no @testset`);
    qualified(f, code);
    const own = definitions(code);
    for (const m of code.matchAll(new RegExp(`(?<![\\w.:@$!])(${IDENT})\\(`, 'g'))) {
      const n = m[1];
      if (defined.has(n) && !exported.has(n) && !own.has(n) && !extended.has(n) && !BASE_NAMES_SHADOWED.has(n)) {
        problems.push(`${f.name}:${lineOf(code, m.index)}: ${n}(...) is not exported by Dinput: write Dinput.${n}`);
      }
    }
  }
  return { problems, summary: `${exported.size} exported names, ${defined.size} definitions, ${users.length} user file(s)` };
}

function load(pkgDir, readme) {
  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.jl') ? [path.join(dir, e.name)] : []);
  const files = walk(pkgDir).sort().map((p) => ({ name: path.relative(pkgDir, p), text: fs.readFileSync(p, 'utf8') }));
  if (readme) files.push({ name: path.basename(readme), text: fs.readFileSync(readme, 'utf8') });
  return files;
}

// Mutations of the real package and the problem each must add.
const CASES = [
  ['the tests call an old name', 'test/runtests.jl', (s) => s.replace(/strategy_reduce\(:sum/, 'Dinput.reduce_all(:sum'), /Dinput has no reduce_all/],
  ['an exported name is not defined', 'src/Dinput.jl', (s) => s.replace('export DinputError', 'export DinputError, no_such_function'), /exported name no_such_function is not defined/],
  ['the tests call an unexported function unqualified', 'test/runtests.jl', (s) => s.replace('Dinput.build_info()', 'build_info()'), /build_info\(\.\.\.\) is not exported by Dinput: write Dinput\.build_info/],
  ['the README names a missing function', 'README.md', (s) => s.replace('```julia\n', '```julia\nDinput.gone_function()\n'), /Dinput has no gone_function/],
  ['a source file is not included', 'src/Dinput.jl', (s) => s.replace('include("records.jl")', ''), /records\.jl: never included/],
  ['the test suite has no testset', 'test/runtests.jl', (s) => s.replace(/@testset/g, '@test_set'), /no @testset/],
];

function main(argv) {
  const selftest = argv[0] === '--self-test';
  const [pkgDir, readme] = selftest ? argv.slice(1) : argv;
  if (!pkgDir) {
    console.error('usage: node check_names.mjs [--self-test] PACKAGE_DIR [README.md]');
    return 2;
  }
  const files = load(pkgDir, readme);
  const base = check(pkgDir, files);
  if (!selftest) {
    for (const p of base.problems) console.log(p);
    console.log(base.problems.length ? `name check FAILED: ${base.problems.length} problem(s) (${base.summary})`
                                     : `name check passed: ${base.summary}`);
    return base.problems.length ? 1 : 0;
  }
  let failed = base.problems.length ? 1 : 0;
  console.log(`${failed ? 'FAIL' : 'ok  '} the package passes${failed ? ': ' + base.problems.join('; ') : ''}`);
  const before = new Set(base.problems);
  for (const [what, file, mutate, expect] of CASES) {
    const target = files.find((f) => f.name === file || f.name === path.normalize(file));
    const text = target ? mutate(target.text) : null;
    if (!target || text === target.text) { console.log(`FAIL ${what}: mutation did not apply`); failed++; continue; }
    const added = check(pkgDir, files.map((f) => (f === target ? { ...f, text } : f))).problems.filter((e) => !before.has(e));
    const hit = added.find((e) => expect.test(e));
    console.log(`${hit ? 'ok  ' : 'FAIL'} ${what} is caught: ${hit || 'new problems: ' + (added.join('; ') || 'none')}`);
    if (!hit) failed++;
  }
  console.log(failed ? `self-test: ${failed} case(s) FAILED` : 'self-test: the checker reports every broken name');
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
