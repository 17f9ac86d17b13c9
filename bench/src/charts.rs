//! PNG charts with `plotters` (bitmap backend, an embedded font: no system libraries).
//!
//! - `<series>-<mode>.png` for every series measured at two or more points: TPS against the
//!   swept parameter, one line per server; the parameter is placed evenly (its values span
//!   0 to 8192), TPS on a log axis when the range needs it.
//! - `overview-tps.png` and `overview-cpu.png`: every measured point as a row of bars, one
//!   per server, on a log axis (only when there are at most [`OVERVIEW_ROWS_MAX`] points, as
//!   in a `--quick` run).

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor};

use crate::results::{Row, Status};
use crate::servers::ServerKind;
use crate::workloads::Mode;

/// DejaVu Sans cut down to ASCII and a few symbols (bench/fonts/README.md).
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");
const FONT_NAME: &str = "sans-serif";
/// Beyond this many points the overview is unreadable; per-series charts cover full runs.
const OVERVIEW_ROWS_MAX: usize = 40;
/// A line chart switches to a log axis when max / min exceeds this.
const LOG_AXIS_RANGE_MIN: f64 = 20.0;

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in; a failure here is a broken build, caught by the tests.
        plotters::style::register_font(FONT_NAME, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("embedded font {FONT_NAME} does not parse"));
    });
}

fn color(k: ServerKind) -> RGBColor {
    match k {
        ServerKind::Myriad => RGBColor(214, 39, 40),
        ServerKind::Postgres => RGBColor(31, 119, 180),
        ServerKind::Ceiling => RGBColor(120, 120, 120),
    }
}

/// Writes every chart into `dir`; returns the files written.
pub fn write_all(rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>, String> {
    register_font();
    let mut written = Vec::new();
    let mut keys: Vec<(&'static str, Mode)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.series, r.mode)) {
            keys.push((r.series, r.mode));
        }
    }
    for (series, mode) in keys {
        let of: Vec<&Row> = rows
            .iter()
            .filter(|r| r.series == series && r.mode == mode)
            .collect();
        let mut values: Vec<u32> = Vec::new();
        for r in &of {
            if !values.contains(&r.value) {
                values.push(r.value);
            }
        }
        if values.len() < 2 || !of.iter().any(|r| r.status == Status::Ok && r.tps.is_some()) {
            continue;
        }
        let path = dir.join(format!("{series}-{}.png", mode.name()));
        line_chart(&of, &values, series, mode, &path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    let measured = rows.iter().filter(|r| r.status == Status::Ok).count();
    let groups = overview_groups(rows);
    if measured > 0 && groups.len() <= OVERVIEW_ROWS_MAX {
        for (name, metric, title) in [
            (
                "overview-tps.png",
                Metric::Tps,
                "Transactions per second (log scale)",
            ),
            (
                "overview-cpu.png",
                Metric::Cpu,
                "Server CPU time per transaction, µs (log scale)",
            ),
        ] {
            let path = dir.join(name);
            overview(rows, &groups, metric, title, &path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn line_chart(rows: &[&Row], values: &[u32], series: &str, mode: Mode, path: &Path) -> DrawResult {
    let parameter = rows[0].parameter;
    let ok: Vec<f64> = rows
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.tps)
        .filter(|t| *t > 0.0)
        .collect();
    let (lo, hi) = ok
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let root = BitMapBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let caption = format!("{series} ({}): TPS by {parameter}", mode.name());
    let n = values.len() as i32;
    let x_label = |x: &i32| -> String {
        if *x >= 1 && *x <= values.len() as i32 {
            values[(*x - 1) as usize].to_string()
        } else {
            String::new()
        }
    };
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(caption, (FONT_NAME, 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70);
    let servers: Vec<ServerKind> = ServerKind::ALL
        .into_iter()
        .filter(|k| rows.iter().any(|r| r.server == *k))
        .collect();
    let points_of = |k: ServerKind| -> Vec<(i32, f64)> {
        values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let r = rows.iter().find(|r| r.server == k && r.value == *v)?;
                let t = r.tps.filter(|t| *t > 0.0 && r.status == Status::Ok)?;
                Some((i as i32 + 1, t))
            })
            .collect()
    };
    macro_rules! draw_lines {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_labels(values.len() + 2)
                .x_label_formatter(&x_label)
                .x_desc(parameter)
                .y_desc("TPS")
                .y_label_formatter(&|y: &f64| format_value(*y))
                .label_style((FONT_NAME, 14))
                .draw()?;
            for &k in &servers {
                let pts = points_of(k);
                if pts.is_empty() {
                    continue;
                }
                let style = ShapeStyle::from(&color(k)).stroke_width(2);
                chart
                    .draw_series(LineSeries::new(pts.clone(), style))?
                    .label(k.label())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                chart.draw_series(
                    pts.into_iter()
                        .map(|p| Circle::new(p, 4, color(k).filled())),
                )?;
            }
            chart
                .configure_series_labels()
                .label_font((FONT_NAME, 14))
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()?;
        }};
    }
    if hi / lo > LOG_AXIS_RANGE_MIN {
        draw_lines!(builder.build_cartesian_2d(0..n + 1, (lo / 2.0..hi * 2.0).log_scale())?);
    } else {
        draw_lines!(builder.build_cartesian_2d(0..n + 1, 0.0..hi * 1.15)?);
    }
    root.present()?;
    Ok(())
}

#[derive(Clone, Copy)]
enum Metric {
    Tps,
    Cpu,
}

/// (series, value, mode) of every point with at least one ok row, in run order.
fn overview_groups(rows: &[Row]) -> Vec<(&'static str, u32, Mode)> {
    let mut groups = Vec::new();
    for r in rows {
        let key = (r.series, r.value, r.mode);
        if r.status == Status::Ok && !groups.contains(&key) {
            groups.push(key);
        }
    }
    groups
}

/// Horizontal bars on a log axis, drawn in pixel coordinates.
fn overview(
    rows: &[Row],
    groups: &[(&'static str, u32, Mode)],
    metric: Metric,
    title: &str,
    path: &Path,
) -> DrawResult {
    let get = |r: &Row| match metric {
        Metric::Tps => r.tps,
        Metric::Cpu => r.cpu_us_per_txn,
    };
    let values: Vec<f64> = rows
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(get)
        .filter(|v| *v > 0.0)
        .collect();
    if values.is_empty() {
        return Ok(());
    }
    let (lo, hi) = values
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let (decade_lo, decade_hi) = (
        lo.log10().floor() as i32,
        (hi.log10().ceil() as i32).max(lo.log10().floor() as i32 + 1),
    );

    const BAR_PX: i32 = 11;
    const GROUP_GAP_PX: i32 = 10;
    const LEFT_PX: i32 = 230;
    const RIGHT_PX: i32 = 90;
    const TOP_PX: i32 = 70;
    const BOTTOM_PX: i32 = 40;
    const WIDTH_PX: i32 = 1000;
    let servers: Vec<ServerKind> = ServerKind::ALL
        .into_iter()
        .filter(|k| rows.iter().any(|r| r.server == *k))
        .collect();
    let group_px = BAR_PX * servers.len() as i32 + GROUP_GAP_PX;
    let height = TOP_PX + BOTTOM_PX + group_px * groups.len() as i32;
    let root = BitMapBackend::new(path, (WIDTH_PX as u32, height as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let font = |size: i32| (FONT_NAME, size).into_font().color(&BLACK);
    let plot_w = WIDTH_PX - LEFT_PX - RIGHT_PX;
    let x_of = |v: f64| -> i32 {
        let f = (v.log10() - f64::from(decade_lo)) / f64::from(decade_hi - decade_lo);
        LEFT_PX + (f * f64::from(plot_w)).round() as i32
    };
    root.draw(&Text::new(title.to_string(), (LEFT_PX, 12), font(20)))?;
    let mut legend_x = LEFT_PX;
    for &k in &servers {
        root.draw(&Rectangle::new(
            [(legend_x, 44), (legend_x + 14, 56)],
            color(k).filled(),
        ))?;
        root.draw(&Text::new(k.label(), (legend_x + 20, 42), font(14)))?;
        legend_x += 150;
    }
    let bottom = TOP_PX + group_px * groups.len() as i32;
    for d in decade_lo..=decade_hi {
        let x = x_of(10f64.powi(d));
        root.draw(&PathElement::new(
            vec![(x, TOP_PX - 4), (x, bottom)],
            RGBColor(220, 220, 220),
        ))?;
        root.draw(&Text::new(decade_label(d), (x - 10, bottom + 8), font(13)))?;
    }
    for (g, (series, value, mode)) in groups.iter().enumerate() {
        let y0 = TOP_PX + g as i32 * group_px;
        let parameter = rows
            .iter()
            .find(|r| r.series == *series)
            .map(|r| r.parameter)
            .unwrap_or("");
        let label = format!("{series} {parameter}={value} {}", mode.name());
        root.draw(&Text::new(label, (8, y0 + group_px / 2 - 12), font(13)))?;
        for (i, &k) in servers.iter().enumerate() {
            let y = y0 + i as i32 * BAR_PX;
            let r = rows.iter().find(|r| {
                r.series == *series && r.value == *value && r.mode == *mode && r.server == k
            });
            let text = match r {
                Some(r) if r.status == Status::Ok => match get(r).filter(|v| *v > 0.0) {
                    Some(v) => {
                        let x1 = x_of(v).max(LEFT_PX + 1);
                        root.draw(&Rectangle::new(
                            [(LEFT_PX, y), (x1, y + BAR_PX - 2)],
                            color(k).filled(),
                        ))?;
                        root.draw(&Text::new(format_value(v), (x1 + 4, y - 1), font(11)))?;
                        continue;
                    }
                    None => "—".to_string(),
                },
                Some(r) => r.status.name().to_string(),
                None => continue,
            };
            root.draw(&Text::new(
                format!("{}: {text}", k.name()),
                (LEFT_PX + 4, y - 1),
                font(11),
            ))?;
        }
    }
    root.present()?;
    Ok(())
}

fn decade_label(d: i32) -> String {
    match d {
        ..=-1 => format!("{}", 10f64.powi(d)),
        0..=2 => format!("{}", 10i64.pow(d as u32)),
        3..=5 => format!("{}k", 10i64.pow(d as u32 - 3)),
        _ => format!("{}M", 10i64.pow(d as u32 - 6)),
    }
}

fn format_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(series: &'static str, value: u32, server: ServerKind, tps: f64) -> Row {
        Row {
            workload: "W1",
            series,
            parameter: "partitions",
            value,
            mode: Mode::Simple,
            server,
            clients: 1,
            tps: Some(tps),
            cpu_us_per_txn: Some(1e6 / tps),
            latency_ms: None,
            planning_ms: None,
            execution_ms: None,
            heap_fetches: None,
            buffers_per_txn: None,
            btree_height: None,
            runs: 1,
            status: Status::Ok,
            note: String::new(),
        }
    }

    #[test]
    fn decade_labels() {
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(2), "100");
        assert_eq!(decade_label(4), "10k");
        assert_eq!(decade_label(6), "1M");
    }

    #[test]
    fn writes_line_and_overview_charts() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = vec![
            row("W1r", 0, ServerKind::Postgres, 6100.0),
            row("W1r", 1024, ServerKind::Postgres, 2500.0),
            row("W1r", 0, ServerKind::Ceiling, 58_000.0),
            row("W1r", 1024, ServerKind::Ceiling, 57_000.0),
            row("W1r", 0, ServerKind::Myriad, 1.0),
        ];
        rows[4].status = Status::Unsupported;
        rows[4].tps = None;
        let files = write_all(&rows, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["W1r-simple.png", "overview-tps.png", "overview-cpu.png"]
        );
        for f in files {
            let bytes = std::fs::read(f).unwrap();
            assert_eq!(&bytes[1..4], b"PNG");
        }
    }
}
