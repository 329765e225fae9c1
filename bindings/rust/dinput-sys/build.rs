//! Finds libdinput with the `pkg-config` command (no crates: the build must work offline)
//! and tells cargo how to link it.
//!
//! pkg-config honours PKG_CONFIG_PATH (and PKG_CONFIG_LIBDIR / PKG_CONFIG_SYSROOT_DIR), so
//! pointing PKG_CONFIG_PATH at a directory holding a `dinput.pc` selects the library: the
//! installed one by default, a build tree's in the CTest run (see ../ctest.cmake). The
//! command itself may be overridden with the PKG_CONFIG variable, as the pkg-config crate
//! and autoconf allow.
//!
//! Emits, for every `-L<dir>` of `pkg-config --libs dinput`: a native link search path and,
//! for this crate's own test binaries, an rpath; and `cargo:libdir=<dir>`, which the `links`
//! key turns into DEP_DINPUT_LIBDIR for dependent build scripts (the safe crate gives its
//! tests and examples the same rpath with it, since link args do not propagate).

use std::env;
use std::process::Command;

fn main() {
    for var in ["PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let libs = run(&pkg_config, &["--libs", "dinput"]);

    // Rebuild when the .pc file itself changes (say, a new build tree was configured).
    let pc_dir = run(&pkg_config, &["--variable=pcfiledir", "dinput"]);
    let pc_dir = pc_dir.trim();
    if !pc_dir.is_empty() {
        println!("cargo:rerun-if-changed={pc_dir}/dinput.pc");
    }

    let mut linked = false;
    let mut lib_dirs = Vec::new();
    for flag in split_flags(&libs) {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
            lib_dirs.push(dir.to_string());
        } else if let Some(name) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
            linked |= name == "dinput";
        }
        // Other flags (-pthread, -Wl,...) are not needed to link a shared libdinput.
    }
    if !linked {
        // A .pc file without -ldinput would give baffling "undefined symbol" errors later.
        panic!("`{pkg_config} --libs dinput` printed `{}`, which does not link -ldinput", libs.trim());
    }
    for dir in &lib_dirs {
        // Lets `cargo test` run this crate's tests without LD_LIBRARY_PATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
    println!("cargo:libdir={}", lib_dirs.join(":"));
}

/// Runs pkg-config and returns its stdout, or stops the build with a message that says what
/// to do: this is the first thing a user without dinput installed will see.
fn run(pkg_config: &str, args: &[&str]) -> String {
    let output = Command::new(pkg_config).args(args).output().unwrap_or_else(|e| {
        panic!(
            "could not run `{pkg_config}` ({e}). Install pkg-config (Debian: apt-get install pkg-config) \
             or set PKG_CONFIG to its path."
        )
    });
    if !output.status.success() {
        panic!(
            "`{pkg_config} {}` failed: {}\n\
             dinput must be findable by pkg-config: install it (cmake --install build) or set \
             PKG_CONFIG_PATH to the directory of its dinput.pc (PKG_CONFIG_PATH is now {:?}).",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim(),
            env::var("PKG_CONFIG_PATH").unwrap_or_default()
        );
    }
    String::from_utf8(output.stdout).expect("pkg-config printed non-UTF-8 output")
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
