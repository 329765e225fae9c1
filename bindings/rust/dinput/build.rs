//! Gives this crate's own test and example binaries an rpath to libdinput.
//!
//! dinput-sys's build script finds the library with pkg-config, but `cargo:rustc-link-arg`
//! only applies to the package that emits it. dinput-sys passes the library directories on
//! through its `links = "dinput"` metadata (DEP_DINPUT_LIBDIR, ':'-separated), so that
//! `cargo test` and `cargo run --example` work without LD_LIBRARY_PATH, also when the binaries
//! are run outside cargo. Programs that depend on this crate find the library under `cargo run`
//! and `cargo test` through dinput-sys's search path in its OUT_DIR; run directly, through a
//! system library directory, LD_LIBRARY_PATH, or an rpath of their own (README.md).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DINPUT_LIBDIR");
    if let Ok(dirs) = std::env::var("DEP_DINPUT_LIBDIR") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
