//! Finds libdinput (no crates: the build must work offline), tells cargo how to link it, and
//! makes `cargo run` / `cargo test` of any crate that depends on this one find it at run time
//! without LD_LIBRARY_PATH.
//!
//! Where the library comes from, first match wins:
//! 1. `DINPUT_LIB_DIR`: a directory holding libdinput.so (a build tree's `src/`, or an
//!    install's `lib/`).
//! 2. pkg-config, when `PKG_CONFIG_PATH`, `PKG_CONFIG_LIBDIR` or `PKG_CONFIG` is set: the
//!    user chose a dinput.pc (the CTest run points at one for its build tree).
//! 3. This repository's build tree, `build/src/` (where `cmake --preset default` or
//!    `cmake -B build` puts the library), when it holds libdinput.so: a crate used by path
//!    from a checkout then links the library built from the same header as its declarations.
//! 4. pkg-config's default search: an installed dinput (`cmake --install build`).
//!
//! Run time: cargo puts every `rustc-link-search` directory that lies inside the target
//! directory on the dynamic library path of the programs it runs (`cargo run`, `cargo test`,
//! for dependents too), and drops the others. So the library files are symlinked into
//! `$OUT_DIR/lib` and that directory is a search path as well. Link arguments do not reach
//! dependents, so an rpath is given only to this crate's own tests; the library directories
//! go on through the `links = "dinput"` metadata as `cargo:libdir` (DEP_DINPUT_LIBDIR,
//! ':'-separated), which the safe crate's build script turns into an rpath for its own tests
//! and examples, and which a program's build script can use the same way for a binary that
//! runs outside cargo (see README.md).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for var in ["DINPUT_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let lib_dirs = find_library();
    for dir in &lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=dinput");

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    match link_into(&out_dir.join("lib"), &lib_dirs) {
        Ok(true) => println!("cargo:rustc-link-search=native={}", out_dir.join("lib").display()),
        Ok(false) => {}
        // Not fatal: linking works without it; only `cargo run` then needs the library on the
        // loader's path by other means.
        Err(e) => println!("cargo:warning=could not link libdinput into {}: {e}", out_dir.display()),
    }

    for dir in &lib_dirs {
        // Lets `cargo test` run this crate's tests without LD_LIBRARY_PATH, also outside
        // cargo.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    let joined: Vec<String> = lib_dirs.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:libdir={}", joined.join(":"));
}

/// The directories to link libdinput from, by the rules at the top of this file.
fn find_library() -> Vec<PathBuf> {
    if let Some(dir) = env::var_os("DINPUT_LIB_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !has_library(&dir) {
            panic!("DINPUT_LIB_DIR is {}, which holds no libdinput.so", dir.display());
        }
        println!("cargo:rerun-if-changed={}", dir.join(LIBRARY).display());
        return vec![dir];
    }
    let pkg_config_chosen =
        ["PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"].iter().any(|v| env::var_os(v).is_some());
    if pkg_config_chosen {
        return pkg_config().unwrap_or_else(|e| panic!("{e}"));
    }
    let repo_build = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/src");
    if has_library(&repo_build) {
        let dir = repo_build.canonicalize().unwrap_or(repo_build);
        // Relink when the build tree's library is rebuilt (its soname link changes mtime).
        println!("cargo:rerun-if-changed={}", dir.join(LIBRARY).display());
        return vec![dir];
    }
    pkg_config().unwrap_or_else(|e| {
        panic!(
            "{e}\n\
             dinput was not found. Any one of these works:\n\
             - build it in this repository: cmake --preset default && cmake --build build (the \
               crate then uses build/src);\n\
             - set DINPUT_LIB_DIR to the directory holding libdinput.so;\n\
             - install it (cmake --install build) or set PKG_CONFIG_PATH to the directory of its \
               dinput.pc."
        )
    })
}

const LIBRARY: &str = "libdinput.so";

fn has_library(dir: &Path) -> bool {
    dir.join(LIBRARY).exists()
}

/// The `-L` directories of `pkg-config --libs dinput`, or a message saying what failed.
fn pkg_config() -> Result<Vec<PathBuf>, String> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let libs = run(&pkg_config, &["--libs", "dinput"])?;

    // Rebuild when the .pc file itself changes (say, a new build tree was configured).
    let pc_dir = run(&pkg_config, &["--variable=pcfiledir", "dinput"])?;
    let pc_dir = pc_dir.trim();
    if !pc_dir.is_empty() {
        println!("cargo:rerun-if-changed={pc_dir}/dinput.pc");
    }

    let mut linked = false;
    let mut lib_dirs = Vec::new();
    for flag in split_flags(&libs) {
        if let Some(dir) = flag.strip_prefix("-L") {
            lib_dirs.push(PathBuf::from(dir));
        } else if let Some(name) = flag.strip_prefix("-l") {
            linked |= name == "dinput";
        }
        // Other flags (-pthread, -Wl,...) are not needed to link a shared libdinput.
    }
    if !linked {
        // A .pc file without -ldinput would give baffling "undefined symbol" errors later.
        return Err(format!("`{pkg_config} --libs dinput` printed `{}`, which does not link -ldinput", libs.trim()));
    }
    Ok(lib_dirs)
}

/// Symlinks every libdinput.so* file of `lib_dirs` into `dest` (emptied first). Returns
/// whether it linked any. Unix only: elsewhere nothing is linked.
fn link_into(dest: &Path, lib_dirs: &[PathBuf]) -> std::io::Result<bool> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    std::fs::create_dir_all(dest)?;
    let mut any = false;
    #[cfg(unix)]
    for dir in lib_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let is_lib = name.to_str().is_some_and(|n| n == LIBRARY || n.starts_with("libdinput.so."));
            // The first directory that has a file wins, as for the linker's -L order.
            if is_lib && !dest.join(&name).exists() {
                std::os::unix::fs::symlink(entry.path(), dest.join(&name))?;
                any = true;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = lib_dirs;
    Ok(any)
}

/// Runs pkg-config and returns its stdout, or a message that says what to do: this is the
/// first thing a user without dinput will see.
fn run(pkg_config: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(pkg_config).args(args).output().map_err(|e| {
        format!(
            "could not run `{pkg_config}` ({e}). Install pkg-config (Debian: apt-get install pkg-config) \
             or set PKG_CONFIG to its path, or set DINPUT_LIB_DIR."
        )
    })?;
    if !output.status.success() {
        return Err(format!(
            "`{pkg_config} {}` failed: {}\n\
             pkg-config finds dinput once it is installed (cmake --install build) or once \
             PKG_CONFIG_PATH names the directory of its dinput.pc (PKG_CONFIG_PATH is now {:?}).",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim(),
            env::var("PKG_CONFIG_PATH").unwrap_or_default()
        ));
    }
    String::from_utf8(output.stdout).map_err(|_| format!("`{pkg_config}` printed non-UTF-8 output"))
}

/// Splits pkg-config output into flags. pkg-config escapes spaces in paths with a backslash,
/// so a plain whitespace split would break `-L/path\ with\ spaces`.
fn split_flags(s: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let mut current = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    flags.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        flags.push(current);
    }
    flags
}
