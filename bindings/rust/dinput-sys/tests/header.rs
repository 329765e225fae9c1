//! Checks the hand-written declarations of src/lib.rs against include/dinput.h and
//! include/dinput_cuda.h.
//!
//! The files are parsed with simple text processing (the header's C is regular: one
//! declaration per statement, no nested macros) and compared:
//! - every `DINPUT_API` function of the header is declared in Rust and vice versa, with the
//!   same number of parameters, and each parameter and the return type translated from C
//!   (`const char *const *` -> `*const *const c_char`, `size_t` -> `usize`, ...) equal to the
//!   Rust type as written;
//! - every callback typedef likewise;
//! - every enum value and numeric `#define DINPUT_*` has a Rust constant of the same value;
//! - every typedef name exists in Rust.
//!
//! The header is found through $DINPUT_HEADER (CTest sets it) or relative to this crate:
//! ../../../include/dinput.h; dinput_cuda.h is the file of that name next to it. Its CUDA
//! handle types, cudaStream_t and cudaEvent_t, are pointers to opaque structs and are
//! expected as `*mut c_void`. A test that cannot find a header fails rather than passing
//! vacuously.
//! Further tests call the library to check that its names for the status and dtype values
//! agree with the constants, i.e. the library linked is the one the header describes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::CStr;
use std::path::PathBuf;

// ------------------------------------------------------------------------------------------
// Shared pieces
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
struct Signature {
    params: Vec<String>, // types, whitespace removed
    ret: String,         // "" for void
}

#[derive(Default, Debug)]
struct Api {
    functions: BTreeMap<String, Signature>,
    callbacks: BTreeMap<String, Signature>,
    constants: BTreeMap<String, i64>,
    types: BTreeSet<String>,
    /// typedef alias -> the struct it names (`dinput_tensor_t` -> `dinput_tensor`).
    struct_aliases: BTreeMap<String, String>,
}

fn header_path() -> PathBuf {
    match std::env::var_os("DINPUT_HEADER") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include/dinput.h"),
    }
}

fn cuda_header_path() -> PathBuf {
    header_path().with_file_name("dinput_cuda.h")
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e} (set DINPUT_HEADER)", path.display()))
}

/// Removes `/* ... */` and `// ...` comments (no string literal in either file contains them).
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none() || Some(b) < l => {
                out.push_str(&rest[..b]);
                let end = rest[b + 2..].find("*/").expect("unterminated comment") + b + 4;
                out.push(' ');
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = &rest[l..];
                let end = rest.find('\n').unwrap_or(rest.len());
                rest = &rest[end..];
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Splits at commas that are not nested in (), <> or {}.
fn split_top_level(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    let mut prev = ' ';
    for c in s.chars() {
        match c {
            '(' | '<' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            '>' if prev != '-' => depth -= 1, // `->` is not a closing bracket
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                prev = c;
                continue;
            }
            _ => {}
        }
        current.push(c);
        prev = c;
    }
    if !current.trim().is_empty() {
        parts.push(current);
    }
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// Index just past the parenthesis closing the one at `open`.
fn matching_paren(s: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in {s}")
}

/// A tiny evaluator for the constant expressions of both files: integers (decimal, or hex
/// with 0x and Rust's `_` separators), names defined earlier, unary minus, + - * / and
/// parentheses.
fn eval(expr: &str, env: &BTreeMap<String, i64>) -> i64 {
    let mut tokens = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect::<String>());
        } else {
            tokens.push(c.to_string());
            i += 1;
        }
    }
    struct P<'a> {
        t: Vec<String>,
        i: usize,
        env: &'a BTreeMap<String, i64>,
    }
    impl P<'_> {
        fn peek(&self) -> Option<&str> {
            self.t.get(self.i).map(|s| s.as_str())
        }
        fn next(&mut self) -> String {
            self.i += 1;
            self.t.get(self.i - 1).cloned().expect("unexpected end of expression")
        }
        fn sum(&mut self) -> i64 {
            let mut v = self.product();
            while let Some(op) = self.peek() {
                match op {
                    "+" => {
                        self.next();
                        v += self.product();
                    }
                    "-" => {
                        self.next();
                        v -= self.product();
                    }
                    _ => break,
                }
            }
            v
        }
        fn product(&mut self) -> i64 {
            let mut v = self.unary();
            while let Some(op) = self.peek() {
                match op {
                    "*" => {
                        self.next();
                        v *= self.unary();
                    }
                    "/" => {
                        self.next();
                        v /= self.unary();
                    }
                    _ => break,
                }
            }
            v
        }
        fn unary(&mut self) -> i64 {
            let t = self.next();
            match t.as_str() {
                "-" => -self.unary(),
                "(" => {
                    let v = self.sum();
                    assert_eq!(self.next(), ")");
                    v
                }
                _ if t.starts_with("0x") || t.starts_with("0X") => {
                    i64::from_str_radix(&t[2..].replace('_', ""), 16).unwrap_or_else(|e| panic!("bad hex {t}: {e}"))
                }
                _ if t.chars().next().unwrap().is_ascii_digit() => {
                    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
                    digits.parse().unwrap()
                }
                _ => *self.env.get(&t).unwrap_or_else(|| panic!("unknown name {t} in a constant expression")),
            }
        }
    }
    let mut p = P { t: tokens, i: 0, env };
    let v = p.sum();
    assert!(p.peek().is_none(), "trailing tokens in constant expression {expr}");
    v
}

// ------------------------------------------------------------------------------------------
// The header
// ------------------------------------------------------------------------------------------

/// Translates one C declaration (a parameter with its name, or a bare return type) into the
/// Rust type the sys crate must use. Returns "" for `void` return types.
fn c_type_to_rust(decl: &str, has_name: bool) -> String {
    let spaced = decl.replace('*', " * ");
    let mut tokens: Vec<&str> = spaced.split_whitespace().filter(|t| *t != "struct").collect();
    if has_name {
        let name = tokens.pop().expect("empty parameter");
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !tokens.is_empty(),
            "parameter without a name: {decl}"
        );
    }
    let mut base_const = false;
    let mut base = None;
    let mut i = 0;
    while i < tokens.len() && tokens[i] != "*" {
        match tokens[i] {
            "const" => base_const = true,
            t => {
                assert!(base.is_none(), "multi-word base type in {decl}");
                base = Some(t);
            }
        }
        i += 1;
    }
    let base = base.unwrap_or_else(|| panic!("no type in {decl}"));
    let mut ty = match base {
        "void" => "c_void",
        "int" => "c_int",
        "char" => "c_char",
        "size_t" => "usize",
        "int64_t" => "i64",
        "int32_t" => "i32",
        "uint64_t" => "u64",
        "uint8_t" => "u8",
        "double" => "f64",
        // CUDA's handles (`struct CUstream_st *`, `struct CUevent_st *`), opaque to Rust.
        "cudaStream_t" | "cudaEvent_t" => "*mut c_void",
        other => other,
    }
    .to_string();
    if ty == "c_void" && i == tokens.len() {
        return String::new(); // a plain `void`
    }
    let mut pointee_const = base_const;
    while i < tokens.len() {
        assert_eq!(tokens[i], "*", "unexpected token in {decl}");
        ty = format!("*{} {}", if pointee_const { "const" } else { "mut" }, ty);
        i += 1;
        pointee_const = false;
        if i < tokens.len() && tokens[i] == "const" {
            pointee_const = true; // this pointer itself is const: the next level points at const
            i += 1;
        }
    }
    squash(&ty)
}

fn c_params(params: &str) -> Vec<String> {
    let params = params.trim();
    if params == "void" || params.is_empty() {
        return Vec::new();
    }
    split_top_level(params).iter().map(|p| c_type_to_rust(p, true)).collect()
}

/// True when `value` is an integer constant expression over numbers and constants known so
/// far (what [`eval`] can compute), as opposed to a macro that expands to C text.
fn is_constant_expr(value: &str, constants: &BTreeMap<String, i64>) -> bool {
    let value = value.trim();
    !value.is_empty()
        && value.chars().all(|c| c.is_ascii_alphanumeric() || "_+-*/() \t".contains(c))
        && value
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.chars().next().unwrap().is_ascii_digit())
            .all(|w| constants.contains_key(w))
}

/// Replaces whole-word occurrences of `word`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        out.push_str(&rest[..at]);
        let whole_word = !out.ends_with(is_ident) && !rest[at + word.len()..].starts_with(is_ident);
        out.push_str(if whole_word { with } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// A `#define` that expands to text: object-like (`params` None) or function-like.
struct TextMacro {
    name: String,
    params: Option<Vec<String>>,
    body: String,
}

/// Expands the text macros in `text` (one level of simple substitution is all dinput.h
/// uses, e.g. `DINPUT_ENUM(name)` -> `enum name`).
fn expand(text: &str, macros: &[TextMacro]) -> String {
    let mut text = text.to_string();
    for m in macros {
        match &m.params {
            None => text = replace_word(&text, &m.name, &m.body),
            Some(params) => {
                let call = format!("{}(", m.name);
                while let Some(at) = text.find(&call) {
                    let open = at + m.name.len();
                    let close = matching_paren(&text, open);
                    let args = split_top_level(&text[open + 1..close - 1]);
                    assert_eq!(args.len(), params.len(), "{} takes {} argument(s)", m.name, params.len());
                    let mut body = m.body.clone();
                    for (p, a) in params.iter().zip(&args) {
                        body = replace_word(&body, p, a);
                    }
                    text.replace_range(at..close, &body);
                }
            }
        }
    }
    text
}

/// Runs the header's preprocessor directives well enough for dinput.h: `#ifndef` is taken,
/// `#ifdef`/`#if` are not (they guard C++ and the library's own build), `#else` flips.
/// Collects `#define DINPUT_<NAME> <integer expression>` as constants, expands the other
/// macros (but `DINPUT_API`, which marks the functions), and returns the remaining C text.
fn preprocess(src: &str, constants: &mut BTreeMap<String, i64>) -> String {
    let joined = src.replace("\\\n", " ");
    let mut out = String::new();
    let mut active: Vec<bool> = Vec::new();
    let mut macros = Vec::new();
    for line in joined.lines() {
        let trimmed = line.trim();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let directive = directive.trim();
            let word = directive.split_whitespace().next().unwrap_or("");
            let parent = active.iter().all(|a| *a);
            match word {
                "ifndef" => active.push(true),
                "ifdef" | "if" => active.push(false),
                "else" => {
                    let last = active.pop().expect("#else without #if");
                    active.push(!last);
                }
                "endif" => {
                    active.pop().expect("#endif without #if");
                }
                "define" if parent => {
                    let rest = directive["define".len()..].trim();
                    let name_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
                    let name = rest[..name_end].to_string();
                    if rest[name_end..].starts_with('(') {
                        let close = rest.find(')').expect("unterminated macro parameters");
                        let params = rest[name_end + 1..close].split(',').map(|p| p.trim().to_string()).collect();
                        macros.push(TextMacro {
                            name,
                            params: Some(params),
                            body: rest[close + 1..].trim().to_string(),
                        });
                        continue;
                    }
                    let value = rest[name_end..].trim();
                    if name == "DINPUT_API" || value.is_empty() {
                        continue; // the API marker and include guards
                    }
                    if is_constant_expr(value, constants) {
                        let v = eval(value, constants);
                        constants.insert(name, v);
                    } else {
                        macros.push(TextMacro { name, params: None, body: value.to_string() });
                    }
                }
                "include" | "define" => {}
                other => panic!("unexpected directive #{other}"),
            }
            continue;
        }
        if active.iter().all(|a| *a) {
            out.push_str(line);
            out.push('\n');
        }
    }
    expand(&out, &macros)
}

fn parse_header(src: &str) -> Api {
    let mut api = Api::default();
    let text = preprocess(&strip_comments(src), &mut api.constants);
    // The C++ guard's `extern "C" {` and `}` sat inside #ifdef __cplusplus and are gone, so
    // every remaining statement ends with `;`.
    for statement in text.split(';') {
        let s = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.is_empty() {
            continue;
        }
        if let Some(body) = s.strip_prefix("typedef enum ") {
            let open = body.find('{').expect("enum without body");
            let close = body.rfind('}').expect("enum without end");
            let typedef = body[close + 1..].trim();
            api.types.insert(typedef.to_string());
            let mut next = 0i64;
            for item in split_top_level(&body[open + 1..close]) {
                let (name, value) = match item.split_once('=') {
                    Some((n, v)) => (n.trim().to_string(), eval(v, &api.constants)),
                    None => (item.trim().to_string(), next),
                };
                next = value + 1;
                api.constants.insert(name, value);
            }
        } else if let Some(body) = s.strip_prefix("typedef struct ") {
            let (tag, alias) = body.split_once(' ').expect("typedef struct without alias");
            api.types.insert(tag.to_string());
            api.types.insert(alias.to_string());
            api.struct_aliases.insert(alias.to_string(), tag.to_string());
        } else if let Some(body) = s.strip_prefix("typedef ") {
            // typedef RET (*NAME)(PARAMS)
            let star = body.find("(*").expect("unknown typedef");
            let ret = c_type_to_rust(&body[..star], false);
            let name_end = body[star..].find(')').unwrap() + star;
            let name = body[star + 2..name_end].trim().to_string();
            let params_open = body[name_end..].find('(').unwrap() + name_end;
            let params_close = matching_paren(body, params_open);
            let params = c_params(&body[params_open + 1..params_close - 1]);
            api.types.insert(name.clone());
            api.callbacks.insert(name, Signature { params, ret });
        } else if let Some(body) = s.strip_prefix("DINPUT_API ") {
            let open = body.find('(').expect("function without parameters");
            let close = matching_paren(body, open);
            let head = &body[..open];
            let name_start = head.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let name = head[name_start..].to_string();
            let ret = c_type_to_rust(&head[..name_start], false);
            let params = c_params(&body[open + 1..close - 1]);
            assert!(body[close..].trim().is_empty(), "text after {name}(...)");
            let previous = api.functions.insert(name.clone(), Signature { params, ret });
            assert!(previous.is_none(), "{name} declared twice in the header");
        } else if let Some(tag) = s.strip_prefix("struct ") {
            api.types.insert(tag.trim().to_string()); // forward declaration (DLManagedTensor)
        } else {
            panic!("the test does not understand this header statement: {s}");
        }
    }
    api
}

// ------------------------------------------------------------------------------------------
// The Rust declarations
// ------------------------------------------------------------------------------------------

fn rust_params(params: &str) -> Vec<String> {
    split_top_level(params)
        .iter()
        .map(|p| {
            let (_, ty) = p.split_once(": ").unwrap_or_else(|| panic!("parameter without a type: {p}"));
            squash(ty)
        })
        .collect()
}

/// The return type after a `)`: "" when there is none.
fn rust_ret(after: &str) -> String {
    match after.trim().strip_prefix("->") {
        Some(r) => squash(r),
        None => String::new(),
    }
}

/// The text after each occurrence of `prefix` up to the next `;` (one Rust item each).
fn items<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            rest[..rest.find(';').expect("item without ;")].trim()
        })
        .collect()
}

fn parse_rust(src: &str) -> Api {
    let mut api = Api::default();
    let text = strip_comments(src);

    // Constants, in order, so that one may be defined from earlier ones.
    for item in items(&text, "pub const ") {
        let (name, rest) = item.split_once(':').unwrap();
        let (_, value) = rest.split_once('=').unwrap();
        let v = eval(value, &api.constants);
        api.constants.insert(name.trim().to_string(), v);
    }

    // Type names: `pub type X`, `pub struct X`, and the `tag => alias;` lines of opaque!.
    for prefix in ["pub type ", "pub struct "] {
        for item in items(&text, prefix) {
            let name: String = item.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                api.types.insert(name); // (the macro's own `pub struct $name` gives "")
            }
        }
    }
    let opaque_start = text.find("opaque! {").expect("no opaque! block");
    let opaque_end = text[opaque_start..].find('}').unwrap() + opaque_start;
    for line in text[opaque_start + 9..opaque_end].split(';') {
        if let Some((tag, alias)) = line.split_once("=>") {
            let (tag, alias) = (tag.trim().to_string(), alias.trim().to_string());
            api.types.insert(tag.clone());
            api.types.insert(alias.clone());
            api.struct_aliases.insert(alias, tag);
        }
    }

    // Callback typedefs: pub type NAME = Option<unsafe extern "C" fn(PARAMS) -> RET>;
    for rest in items(&text, "pub type ") {
        let Some(fn_at) = rest.find("extern \"C\" fn(") else { continue };
        let name = rest[..rest.find('=').unwrap()].trim().to_string();
        let open = fn_at + "extern \"C\" fn".len();
        let close = matching_paren(rest, open);
        let params = rust_params(&rest[open + 1..close - 1]);
        let tail = rest[close..].trim();
        let tail = tail.strip_suffix('>').expect("callback typedef must be Option<...>");
        let tail = tail.trim().trim_end_matches(','); // rustfmt's trailing comma
        if name.starts_with("dinput_") {
            api.callbacks.insert(name, Signature { params, ret: rust_ret(tail) });
        }
    }

    // Functions: everything declared in `extern "C" { ... }` blocks.
    let mut rest = text.as_str();
    while let Some(at) = rest.find("extern \"C\" {") {
        let block_start = at + "extern \"C\" {".len();
        let mut depth = 1;
        let mut end = block_start;
        for (i, c) in rest[block_start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = block_start + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        for decl in rest[block_start..end].split(';') {
            let decl = decl.trim();
            if decl.is_empty() {
                continue;
            }
            let body =
                decl.strip_prefix("pub fn ").unwrap_or_else(|| panic!("unexpected item in extern block: {decl}"));
            let open = body.find('(').unwrap();
            let close = matching_paren(body, open);
            let name = body[..open].trim().to_string();
            let sig = Signature { params: rust_params(&body[open + 1..close - 1]), ret: rust_ret(&body[close..]) };
            let previous = api.functions.insert(name.clone(), sig);
            assert!(previous.is_none(), "{name} declared twice in Rust");
        }
        rest = &rest[end..];
    }
    api
}

/// Adds the declarations of a second header (dinput_cuda.h) to those of the first.
fn merge(into: &mut Api, from: Api) {
    for (name, sig) in from.functions {
        let previous = into.functions.insert(name.clone(), sig);
        assert!(previous.is_none(), "{name} declared in both headers");
    }
    into.callbacks.extend(from.callbacks);
    into.constants.extend(from.constants);
    into.types.extend(from.types);
    into.struct_aliases.extend(from.struct_aliases);
}

fn apis() -> (Api, Api) {
    let mut header = parse_header(&read(&header_path()));
    merge(&mut header, parse_header(&read(&cuda_header_path())));
    let rust = parse_rust(&read(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")));
    (header, rust)
}

// ------------------------------------------------------------------------------------------
// The checks
// ------------------------------------------------------------------------------------------

fn compare_signatures(kind: &str, header: &BTreeMap<String, Signature>, rust: &BTreeMap<String, Signature>) {
    let mut problems = Vec::new();
    for (name, h) in header {
        match rust.get(name) {
            None => problems.push(format!("{kind} {name} is in dinput.h but not declared in Rust")),
            Some(r) => {
                if h.params.len() != r.params.len() {
                    problems.push(format!(
                        "{kind} {name}: {} parameter(s) in dinput.h, {} in Rust",
                        h.params.len(),
                        r.params.len()
                    ));
                } else {
                    for (i, (hp, rp)) in h.params.iter().zip(&r.params).enumerate() {
                        if hp != rp {
                            problems.push(format!("{kind} {name}: parameter {i} is `{hp}` from C but `{rp}` in Rust"));
                        }
                    }
                }
                if h.ret != r.ret {
                    problems.push(format!("{kind} {name}: returns `{}` from C but `{}` in Rust", h.ret, r.ret));
                }
            }
        }
    }
    for name in rust.keys() {
        if !header.contains_key(name) {
            problems.push(format!("{kind} {name} is declared in Rust but not in dinput.h"));
        }
    }
    assert!(problems.is_empty(), "{} mismatch(es):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_function_is_declared_with_the_same_signature() {
    let (header, rust) = apis();
    // Guard against a parser that silently finds nothing.
    assert!(header.functions.len() >= 100, "only {} functions found in dinput.h", header.functions.len());
    assert_eq!(header.functions["dinput_dataset_map"].params.len(), 6);
    assert_eq!(
        header.functions["dinput_strategy_new"].params,
        vec!["*mut*mutdinput_strategy_t", "*const*constc_char", "c_int"]
    );
    // dinput_cuda.h was read too, with its CUDA handles as opaque pointers.
    assert_eq!(header.functions["dinput_tensor_cuda_wait"].params, vec!["*constdinput_tensor_t", "*mutc_void"]);
    assert_eq!(header.functions["dinput_tensor_cuda_ready_event"].ret, "*mutc_void");
    compare_signatures("function", &header.functions, &rust.functions);
}

#[test]
fn every_callback_typedef_matches() {
    let (header, rust) = apis();
    assert!(header.callbacks.len() >= 9, "callback typedefs in dinput.h: {:?}", header.callbacks.keys());
    compare_signatures("callback type", &header.callbacks, &rust.callbacks);
}

#[test]
fn every_constant_has_the_same_value() {
    let (header, rust) = apis();
    assert!(header.constants.len() >= 50, "only {} constants found in dinput.h", header.constants.len());
    let mut problems = Vec::new();
    for (name, value) in &header.constants {
        match rust.constants.get(name) {
            None => problems.push(format!("{name} = {value} is in dinput.h but not in Rust")),
            Some(v) if v != value => problems.push(format!("{name} is {value} in dinput.h but {v} in Rust")),
            Some(_) => {}
        }
    }
    for name in rust.constants.keys().filter(|n| n.starts_with("DINPUT_")) {
        if !header.constants.contains_key(name) {
            problems.push(format!("{name} is a Rust constant but not in dinput.h"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The constants are also compiled in: spot-check that the parse saw what the compiler sees.
    assert_eq!(rust.constants["DINPUT_OUT_OF_RANGE"], dinput_sys::DINPUT_OUT_OF_RANGE as i64);
    assert_eq!(rust.constants["DINPUT_VERSION_NUMBER"], dinput_sys::DINPUT_VERSION_NUMBER as i64);
    assert_eq!(rust.constants["DINPUT_AUTO_SHARD_OFF"], dinput_sys::DINPUT_AUTO_SHARD_OFF as i64);
}

#[test]
fn every_type_exists() {
    let (header, rust) = apis();
    let missing: Vec<_> = header.types.difference(&rust.types).collect();
    assert!(missing.is_empty(), "types of dinput.h missing in Rust: {missing:?}");
    for (alias, tag) in &header.struct_aliases {
        assert_eq!(rust.struct_aliases.get(alias), Some(tag), "typedef struct {tag} {alias}");
    }
}

// ------------------------------------------------------------------------------------------
// Against the library itself
// ------------------------------------------------------------------------------------------

fn cstr(p: *const std::ffi::c_char) -> String {
    assert!(!p.is_null());
    // SAFETY: the library returns static NUL-terminated names (documented in dinput.h).
    unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
}

#[test]
fn library_names_agree_with_the_constants() {
    let (_, rust) = apis();
    let status: HashMap<&str, i64> = rust
        .constants
        .iter()
        .filter(|(n, _)| {
            let n = n.as_str();
            n.starts_with("DINPUT_")
                && !n.starts_with("DINPUT_VERSION")
                && !n.starts_with("DINPUT_AUTO_SHARD")
                && !n.starts_with("DINPUT_REPLICATION")
                && !n.starts_with("DINPUT_REDUCE")
        })
        .map(|(n, v)| (n.as_str(), *v))
        .collect();
    let status_names = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    for name in status_names {
        let value = status[format!("DINPUT_{name}").as_str()];
        // SAFETY: dinput_status_name accepts any value and returns a static string.
        let got = cstr(unsafe { dinput_sys::dinput_status_name(value as i32) });
        assert_eq!(got, name, "dinput_status_name(DINPUT_{name} = {value})");
    }
    let dtype_names = [
        ("BOOL", "bool"),
        ("INT8", "int8"),
        ("INT16", "int16"),
        ("INT32", "int32"),
        ("INT64", "int64"),
        ("UINT8", "uint8"),
        ("UINT16", "uint16"),
        ("UINT32", "uint32"),
        ("UINT64", "uint64"),
        ("FLOAT16", "float16"),
        ("BFLOAT16", "bfloat16"),
        ("FLOAT32", "float32"),
        ("FLOAT64", "float64"),
        ("BYTES", "bytes"),
        ("DTYPE_INVALID", "invalid"),
    ];
    for (constant, name) in dtype_names {
        let value = status[format!("DINPUT_{constant}").as_str()] as i32;
        // SAFETY: dinput_dtype_name accepts any value and returns a static string.
        let got = cstr(unsafe { dinput_sys::dinput_dtype_name(value) });
        assert_eq!(got, name, "dinput_dtype_name(DINPUT_{constant} = {value})");
        let c_name = std::ffi::CString::new(name).unwrap();
        if name != "invalid" {
            // SAFETY: c_name is a valid NUL-terminated string for the duration of the call.
            assert_eq!(unsafe { dinput_sys::dinput_dtype_from_name(c_name.as_ptr()) }, value);
        }
    }
}

#[test]
fn linked_library_has_the_header_version() {
    // SAFETY: both return static data and have no preconditions.
    let (number, text) = unsafe { (dinput_sys::dinput_version_number(), cstr(dinput_sys::dinput_version())) };
    assert_eq!(number, dinput_sys::DINPUT_VERSION_NUMBER, "the library linked is not the one of the header");
    assert_eq!(
        text,
        format!(
            "{}.{}.{}",
            dinput_sys::DINPUT_VERSION_MAJOR,
            dinput_sys::DINPUT_VERSION_MINOR,
            dinput_sys::DINPUT_VERSION_PATCH
        )
    );
}
