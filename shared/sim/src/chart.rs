//! `--chart FILE.svg`: one panel per strategy with the demand (in instances: requests over the
//! per-instance capacity), the instances in service and the effective MinCapacity over time, and
//! the breach minutes marked in red, so a person sees where each strategy falls short.

use std::path::Path;

use plotters::prelude::*;

use crate::engine::{ChartPoint, StrategyResult};

/// Points per line at most; longer runs are bucketed (demand and MinCapacity keep their highest
/// value in a bucket, capacity its lowest, so shortfalls stay visible).
const MAX_POINTS: usize = 2000;

#[derive(Debug, thiserror::Error)]
#[error("failed to draw the chart {path}: {message}")]
pub struct ChartError {
    pub path: String,
    pub message: String,
}

/// Draws target `target` (an index into the world's targets) of every strategy into `path`.
pub fn draw(
    path: &Path,
    title: &str,
    results: &[StrategyResult],
    target: usize,
) -> Result<(), ChartError> {
    let err = |e: &dyn std::fmt::Display| ChartError {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let series: Vec<(&str, Vec<ChartPoint>)> = results
        .iter()
        .map(|r| {
            (
                r.strategy.name(),
                bucket(r.chart.get(target).map_or(&[][..], Vec::as_slice)),
            )
        })
        .collect();
    let start = series
        .iter()
        .filter_map(|(_, p)| p.first())
        .map(|p| p.at)
        .min()
        .unwrap_or(0);
    let end = series
        .iter()
        .filter_map(|(_, p)| p.last())
        .map(|p| p.at)
        .max()
        .unwrap_or(start + 3600);
    let hours = ((end - start) as f64 / 3600.0).max(1.0 / 60.0);
    let top = series
        .iter()
        .flat_map(|(_, p)| p.iter())
        .map(|p| {
            f64::from(p.demand)
                .max(f64::from(p.in_service))
                .max(f64::from(p.min_capacity))
        })
        .fold(1.0, f64::max)
        * 1.1;

    let root =
        SVGBackend::new(path, (1400, 300 * series.len().max(1) as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (header, body) = root.split_vertically(40);
    header
        .draw_text(
            title,
            &("sans-serif", 20).into_text_style(&header),
            (10, 10),
        )
        .map_err(|e| err(&e))?;
    let panels = body.split_evenly((series.len().max(1), 1));
    for (area, (name, points)) in panels.iter().zip(&series) {
        let mut chart = ChartBuilder::on(area)
            .caption(*name, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..hours, 0.0..top)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("hours since the trace starts")
            .y_desc("instances")
            .light_line_style(WHITE)
            .draw()
            .map_err(|e| err(&e))?;
        let x = |p: &ChartPoint| (p.at - start) as f64 / 3600.0;
        let lines: [Line; 3] = [
            ("demand", RGBColor(200, 60, 40), |p| f64::from(p.demand)),
            ("in service", RGBColor(30, 90, 200), |p| {
                f64::from(p.in_service)
            }),
            ("MinCapacity", RGBColor(40, 150, 60), |p| {
                f64::from(p.min_capacity)
            }),
        ];
        for (label, color, y) in lines {
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (x(p), y(p))),
                    color.stroke_width(1),
                ))
                .map_err(|e| err(&e))?
                .label(label)
                .legend(move |(lx, ly)| {
                    PathElement::new(vec![(lx, ly), (lx + 18, ly)], color.stroke_width(2))
                });
        }
        // Breach minutes: a red mark along the bottom.
        let mark = top * 0.02;
        chart
            .draw_series(points.iter().filter(|p| p.breach).map(|p| {
                Rectangle::new(
                    [(x(p), 0.0), (x(p) + 1.0 / 60.0, mark)],
                    RGBColor(200, 0, 0).filled(),
                )
            }))
            .map_err(|e| err(&e))?
            .label("breach minute")
            .legend(|(lx, ly)| {
                Rectangle::new(
                    [(lx, ly - 3), (lx + 18, ly + 3)],
                    RGBColor(200, 0, 0).filled(),
                )
            });
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A line of a panel: its label, colour and value.
type Line = (&'static str, RGBColor, fn(&ChartPoint) -> f64);

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
