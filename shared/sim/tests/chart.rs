//! The chart as a reader sees it: a single breach minute in two weeks is still a visible band,
//! the windows of the chart input are shaded, every requested target is drawn.

use headroom_sim::chart::{draw_targets, ChartTarget, Window};
use headroom_sim::{run_all, synthetic, RunOptions};

#[test]
fn one_breach_minute_in_two_weeks_is_a_visible_band_and_windows_are_shaded() {
    let s = synthetic::fleet(2, 14).expect("fleet");
    let mut results = run_all(
        &s,
        &mut RunOptions {
            chart: true,
            progress: None,
        },
    );
    // GIVEN one breach minute in the middle of two weeks, in one strategy's first target
    for r in &mut results {
        for target in &mut r.chart {
            for p in target.iter_mut() {
                p.breach = false;
            }
        }
    }
    let points = &mut results[0].chart[0];
    let middle = points.len() / 2;
    points[middle].breach = true;
    let start = points[0].at;
    let targets: Vec<ChartTarget> = (0..2)
        .map(|index| ChartTarget {
            index,
            name: format!("target-{index}"),
            windows: vec![Window {
                start: start + 3600,
                end: start + 7200,
                label: "forecast".into(),
            }],
        })
        .collect();
    let path = std::env::temp_dir().join(format!("headroom-chart-band-{}.svg", std::process::id()));
    // WHEN it is drawn
    draw_targets(&path, "two weeks", &results, &targets).expect("chart drawn");
    let svg = std::fs::read_to_string(&path).expect("chart written");
    let _ = std::fs::remove_file(&path);
    // THEN the breach is one band of visible width (at least 0.25 % of ~1300 px)
    let bands: Vec<&str> = svg
        .lines()
        .filter(|l| l.contains("<rect") && l.contains("#D55E00"))
        .collect();
    let widths: Vec<f64> = bands
        .iter()
        .filter_map(|l| {
            let rest = &l[l.find("width=\"")? + 7..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect();
    // One band in the panel and one swatch in the legend.
    assert_eq!(widths.len(), 2, "{bands:?}");
    assert!(widths.iter().all(|w| *w >= 3.0), "{widths:?}");
    assert!(
        svg.contains("forecast window"),
        "the window's label is in the legend"
    );
    assert!(svg.contains("#56B4E9"), "windows are shaded");
    for name in [
        "target-0: target_tracking",
        "target-1: oracle",
        "time (UTC)",
        "instances",
    ] {
        assert!(svg.contains(name), "{name} missing");
    }
}
