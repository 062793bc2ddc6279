//! Prints the per-minute timeline of a scenario around a time window (debugging aid):
//! `cargo run -p headroom-sim --example timeline -- FROM_UNIX MINUTES [PLAN WORLD TRACE]`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let from: i64 = args.get(1).map_or(Ok(0), |s| s.parse())?;
    let minutes: i64 = args.get(2).map_or(Ok(60), |s| s.parse())?;
    let scenario = if args.len() >= 6 {
        let read = |p: &str| std::fs::read_to_string(p);
        headroom_sim::Scenario::parse(
            "custom",
            (&args[3], &read(&args[3])?),
            (&args[4], &read(&args[4])?),
            (&args[5], &read(&args[5])?),
        )?
    } else {
        headroom_sim::Scenario::default_scenario()?
    };
    let mut options = headroom_sim::RunOptions {
        chart: true,
        progress: None,
    };
    let results = headroom_sim::run_all(&scenario, &mut options);
    let from = if from == 0 {
        scenario.trace.start.timestamp()
    } else {
        from
    };
    println!("minute       demand | tt: serve   min  | hr: serve   min  | or: serve  (! = breach minute)");
    let points: Vec<&Vec<headroom_sim::engine::ChartPoint>> =
        results.iter().map(|r| &r.chart[0]).collect();
    for p in points[0]
        .iter()
        .filter(|p| p.at >= from && p.at < from + minutes * 60)
    {
        let find = |i: usize| points[i].iter().find(|q| q.at == p.at).copied();
        let (h, o) = (find(1), find(2));
        let mark = |b: bool| if b { '!' } else { ' ' };
        println!(
            "{} {:>7.1} | {:>5}{} {:>5} | {:>5}{} {:>5} | {:>5}{}",
            chrono::DateTime::from_timestamp(p.at, 0)
                .map(|t| t.format("%a %H:%M").to_string())
                .unwrap_or_default(),
            p.demand,
            p.in_service,
            mark(p.breach),
            p.min_capacity,
            h.map_or(0, |h| h.in_service),
            mark(h.is_some_and(|h| h.breach)),
            h.map_or(0, |h| h.min_capacity),
            o.map_or(0, |o| o.in_service),
            mark(o.is_some_and(|o| o.breach)),
        );
    }
    Ok(())
}
