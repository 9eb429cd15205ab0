//! The plots of the results site, drawn with `plotters` into SVG strings:
//! the Evolution (population share per generation, stacked) and the payoff
//! heat map of the final round. Not here: a game's plot, one per game and
//! so written directly into compact SVG (`super::game_svg`).
//!
//! Pure: data in, SVG text out. It reads no store and writes no file. Text
//! in the plots is real SVG `<text>` (selectable, escaped by the backend).
//! Colors come from the Okabe–Ito palette (strategies, players) and a
//! viridis-like ramp (heat map); every colored thing also carries a number,
//! a label or a marker shape, so color is never the only cue.
//!
//! **Invariant:** the same data gives the same SVG, byte for byte.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::engine::results::{EvolutionResult, Results};

/// The Okabe–Ito colors without black: orange, sky blue, bluish green,
/// yellow, blue, vermillion, reddish purple.
pub const OKABE_ITO: [RGBColor; 7] = [
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
];
/// The band of every strategy beyond the labelled ones.
pub const OTHERS: RGBColor = RGBColor(0xBB, 0xBB, 0xBB);
/// Player P (blue, circles, thick line) and Q (vermillion, triangles, thin line).
pub const P_COLOR: RGBColor = RGBColor(0x00, 0x72, 0xB2);
pub const Q_COLOR: RGBColor = RGBColor(0xD5, 0x5E, 0x00);

/// How many strategies the Evolution plot names; the rest share one band.
pub const EVOLUTION_LABELLED: usize = 7;

const FONT: &str = "sans-serif";

type PlotResult<T> = Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Luminance-based text color for a cell background.
fn ink_on(c: RGBColor) -> RGBColor {
    let l = 0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2);
    if l < 128.0 {
        WHITE
    } else {
        BLACK
    }
}

/// A viridis-like ramp, `t` in 0..=1 (dark purple to yellow).
pub fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// One band of the Evolution plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// 1-based label number (0 for the "others" band).
    pub number: usize,
    pub label: String,
    /// Share of the population per generation, 0..=1.
    pub shares: Vec<f64>,
}

/// The strategies in Evolution order (ranked first, then unranked), the
/// first [`EVOLUTION_LABELLED`] as bands of their own, the rest summed into
/// "others". Shares are per generation.
pub fn evolution_bands(evo: &EvolutionResult) -> Vec<Band> {
    let mut order: Vec<&str> = evo.ranking.iter().map(|e| e.team.as_str()).collect();
    order.extend(evo.unranked.iter().map(String::as_str));
    // Any team of the generations not listed (should not happen) goes last.
    if let Some(g0) = evo.generations.first() {
        for name in g0.counts.keys() {
            if !order.contains(&name.as_str()) {
                order.push(name);
            }
        }
    }
    let totals: Vec<f64> = evo
        .generations
        .iter()
        .map(|g| g.counts.values().sum::<u64>().max(1) as f64)
        .collect();
    let share = |name: &str| -> Vec<f64> {
        evo.generations
            .iter()
            .zip(&totals)
            .map(|(g, t)| g.counts.get(name).copied().unwrap_or(0) as f64 / t)
            .collect()
    };
    let mut bands: Vec<Band> = order
        .iter()
        .take(EVOLUTION_LABELLED)
        .enumerate()
        .map(|(i, name)| Band {
            number: i + 1,
            label: (*name).to_string(),
            shares: share(name),
        })
        .collect();
    let rest = &order[order.len().min(EVOLUTION_LABELLED)..];
    if !rest.is_empty() {
        let mut shares = vec![0.0; evo.generations.len()];
        for name in rest {
            for (s, v) in shares.iter_mut().zip(share(name)) {
                *s += v;
            }
        }
        bands.push(Band {
            number: 0,
            label: format!(
                "{} other strateg{}",
                rest.len(),
                if rest.len() == 1 { "y" } else { "ies" }
            ),
            shares,
        });
    }
    bands
}

fn band_color(b: &Band) -> RGBColor {
    if b.number == 0 {
        OTHERS
    } else {
        OKABE_ITO[(b.number - 1) % OKABE_ITO.len()]
    }
}

/// The Evolution plot of `results`, if the final round produced one: each
/// strategy's population share per generation as stacked areas, the best
/// seven of the Evolution ranking numbered and named in a legend beside the
/// plot, every other strategy summed into a grey band. A self-contained SVG
/// document (for the site and for attaching to the results mail).
pub fn evolution_svg(results: &Results) -> Option<String> {
    let evo = results.evolution.as_ref()?;
    if evo.generations.is_empty() {
        return None;
    }
    evolution_plot(evo).ok()
}

/// Draws the Evolution plot (see [`evolution_svg`]).
pub fn evolution_plot(evo: &EvolutionResult) -> PlotResult<String> {
    let bands = evolution_bands(evo);
    let n_gen = evo.generations.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot_area, legend_area) = root.split_horizontally(790);
        // With a single generation the plot is a flat strip of width 1.
        let x_max = (n_gen.max(2) - 1) as f64;
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(
                "Knobeln Evolution: population share per generation",
                (FONT, 24),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("share of the population")
            .y_label_formatter(&|v| format!("{:.0} %", v * 100.0))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 17))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let xs: Vec<f64> = if n_gen == 1 {
            vec![0.0, 1.0]
        } else {
            (0..n_gen).map(|g| g as f64).collect()
        };
        let at = |v: &[f64], i: usize| v[i.min(v.len() - 1)];
        let mut lower = vec![0.0; n_gen];
        for band in &bands {
            let upper: Vec<f64> = lower
                .iter()
                .zip(&band.shares)
                .map(|(l, s)| (l + s).min(1.0))
                .collect();
            let mut poly: Vec<(f64, f64)> = xs
                .iter()
                .enumerate()
                .map(|(i, &x)| (x, at(&upper, i)))
                .collect();
            poly.extend(
                xs.iter()
                    .enumerate()
                    .rev()
                    .map(|(i, &x)| (x, at(&lower, i))),
            );
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    band_color(band).filled(),
                )))
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    xs.iter().enumerate().map(|(i, &x)| (x, at(&upper, i))),
                    WHITE.stroke_width(1),
                ))
                .map_err(err)?;
            // The band's number where it is thickest, when there is room.
            if let Some((i, thick)) = band.shares.iter().copied().enumerate().fold(
                None,
                |best: Option<(usize, f64)>, (i, s)| match best {
                    Some((_, b)) if b >= s => best,
                    _ => Some((i, s)),
                },
            ) {
                if thick >= 0.05 {
                    let y = at(&lower, i) + thick / 2.0;
                    let text = if band.number == 0 {
                        "others".to_string()
                    } else {
                        band.number.to_string()
                    };
                    let c = ink_on(band_color(band));
                    let x = xs[i.min(xs.len() - 1)];
                    let h = if x > x_max * 0.9 {
                        HPos::Right
                    } else if x < x_max * 0.1 {
                        HPos::Left
                    } else {
                        HPos::Center
                    };
                    let style = TextStyle::from((FONT, 20).into_font())
                        .color(&c)
                        .pos(Pos::new(h, VPos::Center));
                    chart
                        .draw_series(std::iter::once(Text::new(text, (x, y), style)))
                        .map_err(err)?;
                }
            }
            lower = upper;
        }
        draw_evolution_legend(&legend_area, &bands, evo, n_gen)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_evolution_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bands: &[Band],
    evo: &EvolutionResult,
    n_gen: usize,
) -> PlotResult<()> {
    let head = TextStyle::from((FONT, 19).into_font()).color(&BLACK);
    let body = TextStyle::from((FONT, 17).into_font()).color(&BLACK);
    area.draw(&Text::new("Strategies (final share)", (8, 40), head))
        .map_err(err)?;
    let last = n_gen.saturating_sub(1);
    for (k, band) in bands.iter().enumerate() {
        let y = 70 + 30 * k as i32;
        let color = band_color(band);
        area.draw(&Rectangle::new([(8, y - 10), (34, y + 10)], color.filled()))
            .map_err(err)?;
        area.draw(&Rectangle::new(
            [(8, y - 10), (34, y + 10)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        let num = if band.number == 0 {
            "+".to_string()
        } else {
            band.number.to_string()
        };
        area.draw(&Text::new(
            num,
            (21, y),
            TextStyle::from((FONT, 13).into_font())
                .color(&ink_on(color))
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
        let mut label = shown(&band.label);
        if label.chars().count() > 24 {
            label = label.chars().take(23).collect::<String>() + "…";
        }
        let share = band.shares.get(last).copied().unwrap_or(0.0);
        area.draw(&Text::new(
            format!("{label} ({:.1} %)", share * 100.0),
            (42, y),
            body.pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
    }
    let y = 70 + 30 * bands.len() as i32 + 10;
    area.draw(&Text::new(
        format!(
            "population {}, {} generation{}",
            evo.population,
            n_gen,
            if n_gen == 1 { "" } else { "s" }
        ),
        (8, y),
        body.pos(Pos::new(HPos::Left, VPos::Center)),
    ))
    .map_err(err)?;
    Ok(())
}

/// One cell of the payoff table: the row team's average points per game
/// against the column team (counted games), `None` if they have none.
pub type Payoff = Vec<Vec<Option<f64>>>;

/// A team's name as the plots write it: every character that hides text
/// or that XML forbids as its escape (`\u{202e}`, as
/// [`crate::draw::escape`] writes it on the pages). The backend escapes
/// only XML's own characters, and a standalone SVG with U+FFFF is not XML:
/// a browser shows none of it.
fn shown(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if crate::draw::hides(c) || crate::draw::xml_forbids(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The payoff heat map: rows and columns are the teams in `names` order
/// (columns numbered, rows "number name"), each cell the row team's points
/// against the column team, written in the cell, its background on a
/// viridis-like ramp from the smallest to the largest payoff.
pub fn crosstable_plot(names: &[String], payoff: &Payoff) -> PlotResult<String> {
    let n = names.len();
    let max_val = payoff
        .iter()
        .flatten()
        .flatten()
        .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let min_val = payoff
        .iter()
        .flatten()
        .flatten()
        .fold(f64::INFINITY, |a, &b| a.min(b));
    let digits = if max_val.is_finite() {
        format!("{max_val:.0}").len()
    } else {
        1
    };
    let cell_w = (digits as i32 * 8 + 10).max(30);
    let cell_h = 24;
    let name_w = names
        .iter()
        .map(|s| s.chars().count().min(28))
        .max()
        .unwrap_or(4) as i32
        * 8
        + 40;
    let left = name_w + 10;
    let top = 70;
    let width = (left + cell_w * n as i32 + 20).max(360) as u32;
    let height = (top + cell_h * n as i32 + 50) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let small = TextStyle::from((FONT, 15).into_font()).color(&BLACK);
        root.draw(&Text::new(
            "Final round: points of the row team against the column team",
            (10, 22),
            TextStyle::from((FONT, 17).into_font()).color(&BLACK),
        ))
        .map_err(err)?;
        for (j, _) in names.iter().enumerate() {
            let x = left + cell_w * j as i32 + cell_w / 2;
            root.draw(&Text::new(
                (j + 1).to_string(),
                (x, top - 8),
                small.pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))
            .map_err(err)?;
        }
        for (i, name) in names.iter().enumerate() {
            let y = top + cell_h * i as i32;
            let mut label = shown(name);
            if label.chars().count() > 28 {
                label = label.chars().take(27).collect::<String>() + "…";
            }
            root.draw(&Text::new(
                format!("{} {label}", i + 1),
                (left - 8, y + cell_h / 2),
                small.pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
            for j in 0..n {
                let x = left + cell_w * j as i32;
                let value = payoff.get(i).and_then(|r| r.get(j)).copied().flatten();
                let bg = match value {
                    Some(v) if max_val > min_val => viridis((v - min_val) / (max_val - min_val)),
                    Some(_) => viridis(0.5),
                    None => RGBColor(0xEE, 0xEE, 0xEE),
                };
                root.draw(&Rectangle::new(
                    [(x, y), (x + cell_w, y + cell_h)],
                    bg.filled(),
                ))
                .map_err(err)?;
                root.draw(&Rectangle::new(
                    [(x, y), (x + cell_w, y + cell_h)],
                    WHITE.stroke_width(1),
                ))
                .map_err(err)?;
                let text = value.map_or("–".to_string(), |v| format!("{v:.0}"));
                root.draw(&Text::new(
                    text,
                    (x + cell_w / 2, y + cell_h / 2),
                    TextStyle::from((FONT, 14).into_font())
                        .color(&ink_on(bg))
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(err)?;
            }
        }
        // The ramp's key.
        let ky = top + cell_h * n as i32 + 18;
        if max_val.is_finite() {
            for k in 0..10 {
                let x = left + 18 * k;
                root.draw(&Rectangle::new(
                    [(x, ky), (x + 18, ky + 14)],
                    viridis(k as f64 / 9.0).filled(),
                ))
                .map_err(err)?;
            }
            root.draw(&Text::new(
                format!("{min_val:.0}"),
                (left - 6, ky + 7),
                small.pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
            root.draw(&Text::new(
                format!("{max_val:.0} points (– : no counted game)"),
                (left + 186, ky + 7),
                small.pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::results::{EvolutionPlaced, Generation};
    use crate::tournament::EvolutionEnd;

    fn evolution(n: usize, gens: usize) -> EvolutionResult {
        let names: Vec<String> = (0..n).map(|i| format!("team_{i:02}")).collect();
        EvolutionResult {
            population: 5 * n as u64,
            exemplars_per_strategy: 5,
            generations: (0..gens)
                .map(|g| Generation {
                    counts: names
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let c = if i < 3 { 5 + 2 * g as u64 } else { 5 };
                            (s.clone(), c)
                        })
                        .collect(),
                })
                .collect(),
            end: EvolutionEnd::FixedPoint {
                generation: gens - 1,
            },
            ranking: names
                .iter()
                .enumerate()
                .map(|(i, s)| EvolutionPlaced {
                    team: s.clone(),
                    fraction: 1.0 / n as f64,
                    count: 5,
                    place: i as u32 + 1,
                })
                .collect(),
            unranked: vec![],
        }
    }

    #[test]
    fn forty_five_strategies_give_seven_bands_and_one_for_the_others() {
        let evo = evolution(45, 12);
        let bands = evolution_bands(&evo);
        assert_eq!(bands.len(), EVOLUTION_LABELLED + 1);
        assert_eq!(bands.last().unwrap().label, "38 other strategies");
        for g in 0..12 {
            let sum: f64 = bands.iter().map(|b| b.shares[g]).sum();
            assert!((sum - 1.0).abs() < 1e-9, "generation {g}: {sum}");
        }
        let svg = evolution_plot(&evo).unwrap();
        assert!(svg.contains("38 other strategies"));
        assert!(svg.contains("team_00"));
        assert!(!svg.contains("team_07"), "only seven are named");
        assert_eq!(svg, evolution_plot(&evo).unwrap(), "deterministic");
    }

    /// Hostile review (F6): a name with a bidi override, a control
    /// character or a character XML forbids is written as its escape in
    /// both plots (the backend escapes only XML's own characters).
    #[test]
    fn hostile_names_are_escaped_in_the_plots() {
        let hostile = "ab\u{202e}cd\u{ffff}\u{1b}<&";
        let mut evo = evolution(3, 2);
        evo.ranking[0].team = hostile.to_string();
        for g in &mut evo.generations {
            let c = g.counts.remove("team_00").unwrap();
            g.counts.insert(hostile.to_string(), c);
        }
        let names = vec![hostile.to_string(), "b".to_string()];
        let payoff = vec![vec![None, Some(1.0)], vec![Some(2.0), None]];
        for svg in [
            evolution_plot(&evo).unwrap(),
            crosstable_plot(&names, &payoff).unwrap(),
        ] {
            // (The legend cuts names at 24 characters.)
            assert!(svg.contains("ab\\u{202e}cd\\u{ffff}"), "{svg}");
            assert!(!svg.contains(['\u{202e}', '\u{ffff}', '\u{1b}']));
        }
    }

    #[test]
    fn a_single_generation_still_plots() {
        let svg = evolution_plot(&evolution(3, 1)).unwrap();
        assert!(svg.contains("<polygon"));
    }

    #[test]
    fn the_crosstable_writes_every_number() {
        let names = vec!["a".to_string(), "b".to_string()];
        let payoff = vec![vec![Some(10.0), Some(1234.0)], vec![Some(7.0), None]];
        let svg = crosstable_plot(&names, &payoff).unwrap().replace('\n', "");
        for s in [">10<", ">1234<", ">7<", ">–<"] {
            assert!(svg.contains(s), "{s} missing");
        }
    }

    #[test]
    fn viridis_runs_dark_to_light() {
        assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(ink_on(viridis(0.0)), WHITE);
        assert_eq!(ink_on(viridis(1.0)), BLACK);
    }
}
