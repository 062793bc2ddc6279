//! `--chart FILE.svg`: per target, one panel per strategy with the demand (in instances:
//! requests over the per-instance capacity), the instances in service and the effective
//! MinCapacity over wall-clock time (UTC), the breaches as bands, and the planned (or forecast)
//! windows shaded, so a person sees where each strategy falls short, and why.
//!
//! Colours are Okabe-Ito's (told apart with the common colour-vision deficiencies); the legend
//! sits above the panels, never over the data; a breach band is at least 0.25 % of the panel
//! wide, so one breach minute in two weeks is still seen.

use std::path::Path;

use plotters::prelude::*;

use crate::engine::{ChartPoint, StrategyResult};

/// Points per line at most; longer runs are bucketed (demand and MinCapacity keep their highest
/// value in a bucket, capacity its lowest, so shortfalls stay visible).
const MAX_POINTS: usize = 2000;
/// The narrowest breach band, as a share of the panel's time range.
const MIN_BAND: f64 = 0.0025;

const DEMAND: RGBColor = RGBColor(230, 159, 0); // orange
const IN_SERVICE: RGBColor = RGBColor(0, 114, 178); // blue
const MIN_CAPACITY: RGBColor = RGBColor(0, 158, 115); // bluish green
const BREACH: RGBColor = RGBColor(213, 94, 0); // vermillion
const WINDOW: RGBColor = RGBColor(86, 180, 233); // sky blue

#[derive(Debug, thiserror::Error)]
#[error("failed to draw the chart {path}: {message}")]
pub struct ChartError {
    pub path: String,
    pub message: String,
}

/// A shaded time window on a target's panels: a planned peak, or a forecast one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Unix seconds, `[start, end)`.
    pub start: i64,
    pub end: i64,
    /// "planned peak", "forecast", ...: the legend groups windows by label.
    pub label: String,
}

/// One target to draw: its index among the world's targets, its name, its windows.
#[derive(Debug, Clone)]
pub struct ChartTarget {
    pub index: usize,
    pub name: String,
    pub windows: Vec<Window>,
}

/// Draws target `target` (an index into the world's targets) of every strategy into `path`.
pub fn draw(
    path: &Path,
    title: &str,
    results: &[StrategyResult],
    target: usize,
) -> Result<(), ChartError> {
    let one = ChartTarget {
        index: target,
        name: String::new(),
        windows: Vec::new(),
    };
    draw_targets(path, title, results, &[one])
}

/// Draws every target of `targets`, one panel per strategy each, into `path`.
pub fn draw_targets(
    path: &Path,
    title: &str,
    results: &[StrategyResult],
    targets: &[ChartTarget],
) -> Result<(), ChartError> {
    let err = |e: &dyn std::fmt::Display| ChartError {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let panels_per_target = results.len().max(1);
    let height = 260 * (panels_per_target * targets.len().max(1)) as u32 + 70;
    let root = SVGBackend::new(path, (1400, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (header, body) = root.split_vertically(70);
    header
        .draw_text(title, &("sans-serif", 20).into_text_style(&header), (10, 8))
        .map_err(|e| err(&e))?;
    let mut labels: Vec<&str> = targets
        .iter()
        .flat_map(|t| t.windows.iter().map(|w| w.label.as_str()))
        .collect();
    labels.sort_unstable();
    labels.dedup();
    legend(&header, &labels).map_err(|e| err(&e))?;

    let areas = body.split_evenly((panels_per_target * targets.len().max(1), 1));
    let mut areas = areas.iter();
    for target in targets {
        for result in results {
            let Some(area) = areas.next() else { break };
            let points = bucket(
                result
                    .chart
                    .get(target.index)
                    .map_or(&[][..], Vec::as_slice),
            );
            let caption = if target.name.is_empty() {
                result.strategy.name().to_owned()
            } else {
                format!("{}: {}", target.name, result.strategy.name())
            };
            panel(area, &caption, &points, &target.windows).map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// The legend, in the header row above every panel.
fn legend(header: &Area<'_>, window_labels: &[&str]) -> DrawResult {
    let style = ("sans-serif", 15).into_text_style(header);
    let mut x = 10;
    let y = 45;
    for (label, color) in [
        ("demand (instances needed)", DEMAND),
        ("instances in service", IN_SERVICE),
        ("MinCapacity", MIN_CAPACITY),
    ] {
        header.draw(&PathElement::new(
            vec![(x, y), (x + 24, y)],
            color.stroke_width(3),
        ))?;
        header.draw_text(label, &style, (x + 30, y - 8))?;
        x += 40 + 8 * label.len() as i32;
    }
    header.draw(&Rectangle::new(
        [(x, y - 7), (x + 24, y + 7)],
        BREACH.mix(0.45).filled(),
    ))?;
    header.draw_text(
        "breach (some request late or failed)",
        &style,
        (x + 30, y - 8),
    )?;
    x += 40 + 8 * 36;
    for label in window_labels {
        header.draw(&Rectangle::new(
            [(x, y - 7), (x + 24, y + 7)],
            WINDOW.mix(0.3).filled(),
        ))?;
        header.draw_text(&format!("{label} window"), &style, (x + 30, y - 8))?;
        x += 40 + 8 * (label.len() as i32 + 7);
    }
    Ok(())
}

fn panel(area: &Area<'_>, caption: &str, points: &[ChartPoint], windows: &[Window]) -> DrawResult {
    let start = points.first().map_or(0, |p| p.at);
    let end = points.last().map_or(start + 3600, |p| p.at + 60);
    let (unit, origin) = axis(start, end);
    let top = points
        .iter()
        .map(|p| {
            f64::from(p.demand)
                .max(f64::from(p.in_service))
                .max(f64::from(p.min_capacity))
        })
        .fold(1.0, f64::max)
        * 1.1;
    let x_of = |at: i64| (at - origin) as f64 / unit as f64;
    // Wall-clock labels: the date when the range spans days, the time always.
    let long = unit == 86_400;
    let label = move |x: &f64| {
        let at = origin + (x * unit as f64).round() as i64;
        chrono::DateTime::from_timestamp(at, 0).map_or_else(String::new, |t| {
            t.format(if long {
                "%a %m-%d %H:%M"
            } else {
                "%m-%d %H:%M"
            })
            .to_string()
        })
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(x_of(start)..x_of(end), 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("time (UTC)")
        .y_desc("instances")
        .x_labels(12)
        .x_label_formatter(&label)
        .light_line_style(WHITE)
        .draw()?;

    // Windows first, under everything else.
    chart.draw_series(
        windows
            .iter()
            .filter(|w| w.end > start && w.start < end)
            .map(|w| {
                Rectangle::new(
                    [(x_of(w.start.max(start)), 0.0), (x_of(w.end.min(end)), top)],
                    WINDOW.mix(0.25).filled(),
                )
            }),
    )?;
    // Breaches as bands over the whole height, never narrower than MIN_BAND of the range.
    let min_width = (x_of(end) - x_of(start)) * MIN_BAND;
    chart.draw_series(breach_spans(points).into_iter().map(|(from, to)| {
        let (a, b) = (x_of(from), x_of(to));
        let pad = ((min_width - (b - a)) / 2.0).max(0.0);
        Rectangle::new([(a - pad, 0.0), (b + pad, top)], BREACH.mix(0.45).filled())
    }))?;
    // MinCapacity under in-service (where they meet, the count in service is what shows), demand
    // thin on top.
    let lines: [Line; 3] = [
        (MIN_CAPACITY, 3, |p| f64::from(p.min_capacity)),
        (IN_SERVICE, 2, |p| f64::from(p.in_service)),
        (DEMAND, 1, |p| f64::from(p.demand)),
    ];
    for (color, width, y) in lines {
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (x_of(p.at), y(p))),
            color.stroke_width(width),
        ))?;
    }
    Ok(())
}

/// The x axis's unit and origin: days from the first midnight for a range of days, hours from
/// the first whole hour for a shorter one, so the axis's round numbers fall on wall-clock
/// midnights and hours.
fn axis(start: i64, end: i64) -> (i64, i64) {
    let unit = if end - start > 2 * 86_400 {
        86_400
    } else {
        3600
    };
    (unit, start.div_euclid(unit) * unit)
}

/// A line of a panel: its colour, width and value.
type Line = (RGBColor, u32, fn(&ChartPoint) -> f64);

/// Consecutive breach points merged into `[start, end)` spans in Unix seconds.
fn breach_spans(points: &[ChartPoint]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if !p.breach {
            continue;
        }
        let until = points.get(i + 1).map_or(p.at + 60, |next| next.at);
        match spans.last_mut() {
            Some(last) if last.1 >= p.at => last.1 = until,
            _ => spans.push((p.at, until)),
        }
    }
    spans
}

fn bucket(points: &[ChartPoint]) -> Vec<ChartPoint> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let size = points.len().div_ceil(MAX_POINTS);
    points
        .chunks(size)
        .map(|c| ChartPoint {
            at: c[0].at,
            demand: c.iter().map(|p| p.demand).fold(0.0, f32::max),
            in_service: c.iter().map(|p| p.in_service).min().unwrap_or(0),
            min_capacity: c.iter().map(|p| p.min_capacity).max().unwrap_or(0),
            breach: c.iter().any(|p| p.breach),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at: i64, breach: bool) -> ChartPoint {
        ChartPoint {
            at,
            demand: 1.0,
            in_service: 1,
            min_capacity: 1,
            breach,
        }
    }

    #[test]
    fn the_axis_counts_days_from_midnight_or_hours_from_the_hour() {
        let monday = 1_772_409_600; // 2026-03-02T00:00:00Z
        assert_eq!(axis(monday + 1800, monday + 7 * 86_400), (86_400, monday));
        assert_eq!(
            axis(monday + 13 * 3600 + 60, monday + 17 * 3600),
            (3600, monday + 13 * 3600)
        );
    }

    #[test]
    fn consecutive_breach_minutes_make_one_span() {
        let points: Vec<_> = [false, true, true, false, true]
            .iter()
            .enumerate()
            .map(|(i, b)| point(i as i64 * 60, *b))
            .collect();
        assert_eq!(breach_spans(&points), vec![(60, 180), (240, 300)]);
    }
}
