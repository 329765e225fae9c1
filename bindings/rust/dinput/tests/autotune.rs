//! Autotuning (docs/autotune.md): the RAM budget option.

use dinput::{Code, Dataset, Options, AUTOTUNE};

#[test]
fn ram_budget_reaches_the_autotuner() {
    let prefetched = Dataset::range(0, 50, 1).unwrap().prefetch(AUTOTUNE).unwrap();
    let mut o = Options::new().unwrap();
    o.set_ram_budget(12345).unwrap();
    let mut it = prefetched.with_options(&o).unwrap().iter().unwrap();
    assert_eq!(it.by_ref().count(), 50);
    let json = it.statistics().unwrap();
    assert!(json.contains("\"ram_budget\":12345"), "{json}");
    assert!(json.contains("\"knob\":\"buffer_size\""), "{json}");

    let mut bad = Options::new().unwrap();
    let err = bad.set_ram_budget(-1).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("'bytes'"), "{}", err.message);
}
