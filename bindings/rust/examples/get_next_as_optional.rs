//! The tutorial's get_next_as_optional loop: range(9).batch(4) on two CPU replicas prints
//! [0, 1] | [2, 3], then [4, 5] | [6, 7], then [8] | [] and stops at the empty optional.
use dinput::{Dataset, Strategy};

fn main() -> dinput::Result<()> {
    let strategy = Strategy::new(&["CPU:0", "CPU:1"])?;
    let dataset = Dataset::range(0, 9, 1)?.batch(4, false)?; // global batch size 4
    let mut it = strategy.distribute_dataset(&dataset, None)?.iter()?;
    while let Some(step) = it.get_next_as_optional()?.into_per_replica()? {
        let parts = step.iter().map(|e| e.tensor(0)?.to_vec_i64()).collect::<dinput::Result<Vec<_>>>()?;
        let text: Vec<String> = parts.iter().map(|p| format!("{p:?}")).collect();
        println!("{}", text.join(" | "));
    }
    Ok(())
}
