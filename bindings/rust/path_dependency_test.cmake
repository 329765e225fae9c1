# bindings.rust.path_dependency (registered by ctest.cmake; run with cmake -P).
#
# What a user does: a new crate, in a directory of its own, that depends on `dinput` by path.
# Without LD_LIBRARY_PATH (nor PKG_CONFIG_PATH), `cargo run` and `cargo test` must find
# libdinput.so.0, through the search path dinput-sys's build script leaves in its OUT_DIR.
# A second crate follows the README's recipe for a binary run outside cargo: its build script
# turns DEP_DINPUT_LIBDIR into an rpath, and the binary is run directly.
#
# Variables (-D):
#   CARGO        the cargo command
#   DINPUT_CRATE bindings/rust/dinput (the path the crates depend on)
#   WORK_DIR     a scratch directory, emptied first
#   LIB_DIR      optional: DINPUT_LIB_DIR for the crates' builds; empty when the build tree
#                is the repository's build/, which dinput-sys then finds by itself
#   LIBASAN      optional: the ASan runtime to preload into the crates' programs (an
#                ASan-instrumented libdinput can only be loaded after it)

foreach(var CARGO DINPUT_CRATE WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "path_dependency_test.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(_sys_crate ${DINPUT_CRATE}/../dinput-sys)

# The expected output of both programs: range(5).batch(2) read through the safe crate.
set(_main [=[
fn main() -> dinput::Result<()> {
    let dataset = dinput::Dataset::range(0, 5, 1)?.batch(2, false)?;
    let batches = dataset.iter()?.map(|e| e?.tensor(0)?.to_vec_i64()).collect::<dinput::Result<Vec<_>>>()?;
    println!("batches {batches:?}");
    Ok(())
}

#[test]
fn reads_a_dataset() {
    assert_eq!(dinput::Dataset::range(0, 3, 1).unwrap().iter().unwrap().count(), 3);
}
]=])

# crate `plain`: nothing but the dependency.
file(WRITE ${WORK_DIR}/plain/Cargo.toml "[package]
name = \"plain\"
version = \"0.1.0\"
edition = \"2021\"

[dependencies]
dinput = { path = \"${DINPUT_CRATE}\" }

[workspace]
")
file(WRITE ${WORK_DIR}/plain/src/main.rs "${_main}")

# crate `rpath`: the README's recipe for a binary that runs outside cargo.
file(WRITE ${WORK_DIR}/rpath/Cargo.toml "[package]
name = \"rpath\"
version = \"0.1.0\"
edition = \"2021\"

[dependencies]
dinput = { path = \"${DINPUT_CRATE}\" }
dinput-sys = { path = \"${_sys_crate}\" }

[workspace]
")
file(WRITE ${WORK_DIR}/rpath/build.rs [=[
fn main() {
    // dinput-sys passes the directories it linked libdinput from on as DEP_DINPUT_LIBDIR.
    for dir in std::env::var("DEP_DINPUT_LIBDIR").unwrap_or_default().split(':').filter(|d| !d.is_empty()) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
]=])
file(WRITE ${WORK_DIR}/rpath/src/main.rs "${_main}")

if(LIBASAN)
  foreach(crate plain rpath)
    file(WRITE ${WORK_DIR}/${crate}/.cargo/config.toml
      "[target.'cfg(all())']\nrunner = [\"env\", \"LD_PRELOAD=${LIBASAN}\", \"ASAN_OPTIONS=detect_leaks=1\"]\n")
  endforeach()
  set(_direct_env LD_PRELOAD=${LIBASAN} ASAN_OPTIONS=detect_leaks=1)
else()
  set(_direct_env)
endif()

if(LIB_DIR)
  set(_lib_env DINPUT_LIB_DIR=${LIB_DIR})
else()
  set(_lib_env --unset=DINPUT_LIB_DIR)
endif()
# No run-time search path from the environment, and no pkg-config choice either: the crates
# must find the library by what dinput-sys does.
set(_env ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=PKG_CONFIG_PATH --unset=PKG_CONFIG_LIBDIR
  --unset=PKG_CONFIG ${_lib_env} CARGO_TARGET_DIR=${WORK_DIR}/target)

function(run_step what dir expect)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${dir}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expect}")
    message(FATAL_ERROR "${what} failed (exit ${rc}); expected output matching `${expect}`.\n"
      "stdout:\n${out}\nstderr:\n${err}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

run_step("cargo run (plain)" ${WORK_DIR}/plain "batches \\[\\[0, 1\\], \\[2, 3\\], \\[4\\]\\]"
  ${_env} ${CARGO} run --offline -q -j 2)
run_step("cargo test (plain)" ${WORK_DIR}/plain "test reads_a_dataset ... ok"
  ${_env} ${CARGO} test --offline -j 2)
run_step("cargo build (rpath)" ${WORK_DIR}/rpath "" ${_env} ${CARGO} build --offline -q -j 2)
run_step("the rpath binary, run directly" ${WORK_DIR}/rpath "batches \\[\\[0, 1\\], \\[2, 3\\], \\[4\\]\\]"
  ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${_direct_env} ${WORK_DIR}/target/debug/rpath)
