//! Per-stage statistics and traces (docs/statistics.md).

use dinput::{Code, Dataset, Options};

fn stage_field(json: &str, stage: &str, field: &str) -> i64 {
    let at = json.find(&format!("\"name\":\"{stage}\"")).expect("stage listed");
    let rest = &json[at..];
    let key = format!("\"{field}\":");
    let from = rest.find(&key).expect("field listed") + key.len();
    let digits: String = rest[from..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    digits.parse().unwrap()
}

#[test]
fn statistics_count_what_each_stage_produced() {
    let taken = Dataset::range(0, 1000, 1).unwrap().take(7).unwrap();
    let mut it = taken.iter().unwrap();
    assert_eq!(it.by_ref().count(), 7);
    let json = it.statistics().unwrap();
    assert!(json.contains("\"schema\":\"dinput.statistics/1\""), "{json}");
    assert_eq!(stage_field(&json, "take", "elements"), 7);
    assert_eq!(stage_field(&json, "take", "bytes"), 56);
    assert_eq!(stage_field(&json, "range", "elements"), 7);
}

#[test]
fn traces_and_switching_statistics_off() {
    let base = Dataset::range(0, 5, 1).unwrap();
    let mut o = Options::new().unwrap();
    o.set_trace(100).unwrap();
    let traced = base.with_options(&o).unwrap();
    let mut it = traced.iter().unwrap();
    assert_eq!(it.by_ref().count(), 5);
    let trace = it.trace().unwrap();
    assert!(trace.contains("get_next wait") && trace.contains("traceEvents"), "{trace}");

    let mut off = Options::new().unwrap();
    off.set_statistics(false).unwrap();
    let quiet = base.with_options(&off).unwrap();
    let mut it = quiet.iter().unwrap();
    assert_eq!(it.by_ref().count(), 5);
    assert!(it.statistics().unwrap().contains("\"stages\":[]"));

    let mut bad = Options::new().unwrap();
    assert_eq!(bad.set_trace(-1).unwrap_err().code, Code::InvalidArgument);
}
