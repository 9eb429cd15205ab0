//! A game's plot, written straight into compact SVG text ([`game_svg`]):
//! the upper panel the number each side threw per throw (logarithmic
//! scale; P a thick blue line, Q a thin vermillion one), each won throw
//! marked on the winner's number (P a circle, Q a triangle), with a legend;
//! the lower panel the points of each side so far, their last values
//! written at the line's end.
//!
//! Written for size and speed, since a contest has one such plot per game
//! (a page of a thousand throws is 11–33 kB, most of it the data):
//! - the data (the four lines and the markers) in a group scaled by a
//!   tenth, its coordinates whole tenths of a pixel written as integers,
//!   one `<path>` per series: `M` to its first point, then relative `l`
//!   steps (points that lie on a straight line between their neighbours
//!   left out);
//! - the won throws' markers drawn by SVG markers (`marker-start`, `-mid`,
//!   `-end`) at the vertices of one unstroked path per player, not an
//!   element each;
//! - the grid and the axes one `<path>` each, the font set once on the
//!   plot, shared attributes on groups.
//!
//! Text is real SVG `<text>`, escaped by [`crate::draw::escape_into`];
//! colors are [`super::plots`]' P and Q colors (the Okabe–Ito blue and
//! vermillion). Numbers are written by [`crate::decimal::push_integer`] into the caller's
//! string: no allocation per number, per point or per label.
//!
//! Pure: data in, text out. Not here: the page around the plot
//! (`super::direct::game_html`), reading the throws (`super`).
//!
//! **Invariant:** the same data gives the same SVG, byte for byte, on every
//! machine: the logarithmic scale uses [`ln`], written with IEEE 754's
//! exactly rounded operations only (not the platform's libm, whose last
//! digit may differ), and the ticks' powers of ten are integers.

use crate::decimal::{push_integer, push_unsigned};
use crate::draw::escape_into as escape;
use crate::game::knobeln::judge;
use crate::game::Player;

/// The plot's width in pixels (its height is 620).
const WIDTH: f64 = 1100.0;
/// The plotting areas: left and right edges (both panels), the upper
/// panel's top and bottom, the lower panel's.
const LEFT: f64 = 70.0;
const RIGHT: f64 = 1089.0;
const UPPER: (f64, f64) = (35.0, 353.0);
const LOWER: (f64, f64) = (432.0, 573.0);
/// P's and Q's colors (`super::plots::P_COLOR`, `Q_COLOR`).
const P_HEX: &str = "#0072B2";
const Q_HEX: &str = "#D55E00";
/// At most this many labelled ticks on an axis.
const MAX_TICKS: f64 = 10.0;
/// 10^0.1: the upper panel spans at least a tenth of a decade.
const TENTH_DECADE: f64 = 1.258_925_411_794_167_2;

/// `ln m` for `m` in `[√½, √2]`: `2 atanh s` with `s = (m − 1)/(m + 1)`,
/// `|s| ≤ 0.172`, by its series to `s^23` (relative error below 1e-15).
/// Evaluated by the compiler for [`LN_TABLE`], whose rounding is IEEE 754's.
const fn ln_near_one(m: f64) -> f64 {
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    let mut k = 23.0;
    while k > 2.0 {
        series = (series + 1.0 / k) * s2;
        k -= 2.0;
    }
    2.0 * s * (1.0 + series)
}

/// `ln(1 + j/128)` for `j` in `0..=128`, computed when the program is
/// compiled.
const LN_TABLE: [f64; 129] = {
    let mut table = [0.0; 129];
    let mut j = 0;
    while j <= 128 {
        let c = 1.0 + j as f64 / 128.0;
        table[j] = if c > std::f64::consts::SQRT_2 {
            ln_near_one(c / 2.0) + std::f64::consts::LN_2
        } else {
            ln_near_one(c)
        };
        j += 1;
    }
    table
};

/// The natural logarithm of `v` (at least 1 and finite), computed with
/// `+ − × ÷` only, which IEEE 754 rounds exactly on every machine (no fused
/// multiply-add: Rust does not contract them): `f64::ln` is the
/// platform's libm, whose last bit may differ between machines and, once
/// in a while, a printed tenth of a pixel. `v = m·2^e` with `m` in
/// `[1, 2)`, `c = 1 + j/128` the nearest to `m`, `ln m = ln c + 2 atanh s`
/// with `s = (m − c)/(m + c)`, `|s| ≤ 1/512`: [`LN_TABLE`] and three terms
/// of the series (relative error below 1e-15).
fn ln(v: f64) -> f64 {
    const LN_2: f64 = std::f64::consts::LN_2;
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let fraction = bits & 0x000f_ffff_ffff_ffff;
    let m = f64::from_bits(fraction | 0x3ff0_0000_0000_0000);
    // The fraction's top seven bits, rounded: 0..=128.
    let j = ((fraction + (1 << 44)) >> 45) as usize;
    let c = 1.0 + j as f64 / 128.0;
    let s = (m - c) / (m + c);
    let s2 = s * s;
    e as f64 * LN_2 + LN_TABLE[j] + 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0)))
}

/// `v` in whole tenths (of a pixel).
fn tenths(v: f64) -> i64 {
    (v * 10.0).round() as i64
}

/// `v` with at most one decimal, without a trailing `.0`.
fn coord(out: &mut String, v: f64) {
    let tenths = tenths(v);
    let (int, frac) = (tenths / 10, (tenths % 10).abs());
    if tenths < 0 && int == 0 {
        out.push('-');
    }
    push_integer(out, int);
    if frac != 0 {
        out.push('.');
        out.push(char::from(b'0' + frac as u8));
    }
}

/// One point of a path: `x,y`.
fn point(out: &mut String, x: f64, y: f64) {
    coord(out, x);
    out.push(',');
    coord(out, y);
}

/// A path's `d` through points in whole tenths of a pixel: `M` to the
/// first, then relative steps after one `l` (`l10-342 11 5`: a number is
/// parted from the one before by its minus sign or a space).
#[derive(Default)]
struct PathData {
    last: (i64, i64),
    points: usize,
}

impl PathData {
    fn to(&mut self, out: &mut String, (x, y): (i64, i64)) {
        match self.points {
            0 => {
                out.push('M');
                push_integer(out, x);
                Self::next(out, y);
            }
            n => {
                if n == 1 {
                    out.push('l');
                    push_integer(out, x - self.last.0);
                } else {
                    Self::next(out, x - self.last.0);
                }
                Self::next(out, y - self.last.1);
            }
        }
        self.last = (x, y);
        self.points += 1;
    }

    /// A number after another.
    fn next(out: &mut String, n: i64) {
        if n >= 0 {
            out.push(' ');
        }
        push_integer(out, n);
    }
}

/// A step of 1, 2 or 5 times a power of ten that gives at most
/// [`MAX_TICKS`] ticks over `span` (at least 1: the axes count whole
/// throws and points).
fn nice_step(span: f64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if span / s as f64 <= MAX_TICKS || s == u64::MAX {
                return s;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// The start of a `<text>` at `(x, y)` with the given extra attributes,
/// the tag left open.
fn text_start(out: &mut String, x: f64, y: f64, attrs: &str) {
    out.push_str("<text x=\"");
    coord(out, x);
    out.push_str("\" y=\"");
    coord(out, y);
    out.push('"');
    out.push_str(attrs);
}

/// `<text>` at `(x, y)` with the given extra attributes, its content escaped.
fn text(out: &mut String, x: f64, y: f64, attrs: &str, content: &str) {
    text_start(out, x, y, attrs);
    out.push('>');
    escape(out, content);
    out.push_str("</text>\n");
}

/// An axis's ticks: (value, pixel), at most [`MAX_TICKS`] and one more.
struct Ticks {
    at: [(u64, f64); 12],
    len: usize,
}

impl Ticks {
    fn new() -> Ticks {
        Ticks {
            at: [(0, 0.0); 12],
            len: 0,
        }
    }

    fn push(&mut self, tick: (u64, f64)) {
        if let Some(slot) = self.at.get_mut(self.len) {
            *slot = tick;
            self.len += 1;
        }
    }

    fn all(&self) -> &[(u64, f64)] {
        &self.at[..self.len]
    }
}

/// A panel's frame: its caption (written by `caption`), the axis
/// descriptions, the grid lines and tick labels at `x_ticks` and `y_ticks`
/// (labels written by `y_label`), the axes.
fn panel(
    out: &mut String,
    (top, bottom): (f64, f64),
    caption: &dyn Fn(&mut String),
    y_desc: &str,
    x_ticks: &Ticks,
    y_ticks: &Ticks,
    y_label: &dyn Fn(&mut String, u64),
) {
    let mid_x = (LEFT + RIGHT) / 2.0;
    text_start(
        out,
        WIDTH / 2.0,
        top - 20.0,
        " font-size=\"15\" text-anchor=\"middle\" dy=\"0.8em\">",
    );
    caption(out);
    out.push_str("</text>\n");
    let mid_y = (top + bottom) / 2.0;
    text_start(
        out,
        10.0,
        mid_y,
        " font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(270,10,",
    );
    coord(out, mid_y);
    out.push_str(")\" dy=\"0.8em\">");
    escape(out, y_desc);
    out.push_str("</text>\n");
    text(
        out,
        mid_x,
        bottom + 37.0,
        " font-size=\"13\" text-anchor=\"middle\"",
        "throw",
    );
    // The grid: one path of light lines.
    out.push_str("<path stroke=\"#000\" stroke-opacity=\"0.2\" d=\"");
    for &(_, x) in x_ticks.all() {
        out.push('M');
        point(out, x, bottom);
        out.push('V');
        coord(out, top);
    }
    for &(_, y) in y_ticks.all() {
        out.push('M');
        point(out, LEFT, y);
        out.push('H');
        coord(out, RIGHT);
    }
    out.push_str("\"/>\n");
    // The axes and their ticks: one path.
    out.push_str("<path stroke=\"#000\" fill=\"none\" d=\"M");
    point(out, LEFT - 0.5, top);
    out.push('V');
    coord(out, bottom + 0.5);
    out.push('H');
    coord(out, RIGHT);
    for &(_, y) in y_ticks.all() {
        out.push('M');
        point(out, LEFT - 5.5, y);
        out.push_str("h5");
    }
    for &(_, x) in x_ticks.all() {
        out.push('M');
        point(out, x, bottom + 0.5);
        out.push_str("v5");
    }
    out.push_str("\"/>\n");
    // The tick labels.
    out.push_str("<g font-size=\"12\" text-anchor=\"end\">\n");
    for &(v, y) in y_ticks.all() {
        text_start(out, LEFT - 9.0, y, " dy=\"0.4em\">");
        y_label(out, v);
        out.push_str("</text>\n");
    }
    out.push_str("</g>\n<g font-size=\"12\" text-anchor=\"middle\">\n");
    for &(v, x) in x_ticks.all() {
        text_start(out, x, bottom + 11.0, " dy=\"0.8em\">");
        push_unsigned(out, v);
        out.push_str("</text>\n");
    }
    out.push_str("</g>\n");
}

/// The ticks of a linear axis over `lo..=hi` (whole numbers only) mapped
/// to pixels by `px`.
fn linear_ticks(lo: f64, hi: f64, px: impl Fn(f64) -> f64) -> Ticks {
    let step = nice_step(hi - lo);
    let first = (lo.max(0.0) / step as f64).ceil() as u64;
    let mut ticks = Ticks::new();
    let mut k = first;
    while let Some(v) = k.checked_mul(step) {
        if v as f64 > hi || ticks.len == ticks.at.len() {
            break;
        }
        ticks.push((v, px(v as f64)));
        k += 1;
    }
    ticks
}

/// A path through the `n` points `at` gives (whole tenths of a pixel),
/// leaving out every point that `between` (deciding on the data, exactly)
/// says lies on the straight line between its neighbours.
fn line(
    out: &mut String,
    attrs: &str,
    n: usize,
    mut at: impl FnMut(usize) -> (i64, i64),
    mut between: impl FnMut(usize) -> bool,
) {
    out.push_str("<path");
    out.push_str(attrs);
    out.push_str(" d=\"");
    let mut d = PathData::default();
    for i in 0..n {
        if i > 0 && i + 1 < n && between(i) {
            continue;
        }
        d.to(out, at(i));
    }
    out.push_str("\"/>\n");
}

/// The plot of a game between `p` and `q` (the teams' names), throw by
/// throw, with throws allowed in `a..=b` (see the module's description).
/// The site writes the plot into its page with [`write_game_svg`].
#[cfg(test)]
pub fn game_svg(p: &str, q: &str, throws: &[[i64; 2]], a: i64, b: i64) -> String {
    let mut out = String::with_capacity(4096 + 40 * throws.len());
    write_game_svg(&mut out, p, q, throws, a, b);
    out
}

/// [`game_svg`], appended to `out`. Returns the bytes of each side's own
/// series (P's, Q's): the line of the numbers it threw and the markers of
/// the throws it won, each drawn at its own numbers (the site charges a
/// page's blocks to its teams by them).
pub fn write_game_svg(
    out: &mut String,
    p: &str,
    q: &str,
    throws: &[[i64; 2]],
    a: i64,
    b: i64,
) -> [usize; 2] {
    let mut own = [0usize; 2];
    let n = throws.len().max(1);
    // The upper panel's value range (throws outside are drawn at its edge).
    let lo = a.max(1) as f64;
    let hi = (b.max(a.saturating_add(1)) as f64).max(lo * TENTH_DECADE);
    let clamp = |t: i64| (t as f64).clamp(lo, hi);
    // The points each side gained per throw, and in all.
    let gain = |i: usize| judge(throws[i][0], throws[i][1]).points_of();
    let mut final_points = [0u64; 2];
    for i in 0..throws.len() {
        let g = gain(i);
        final_points[0] = final_points[0].saturating_add(u64::from(g[0]));
        final_points[1] = final_points[1].saturating_add(u64::from(g[1]));
    }
    let max_points = final_points[0].max(final_points[1]).max(1) as f64;

    // Pixels: the upper panel's x from 0.5 to n + 0.5, y logarithmic; the
    // lower panel's x from 0 to n + 0.5, y from 0 to 1.05 × the most points.
    let width = RIGHT - LEFT;
    let ux = |x: f64| LEFT + (x - 0.5) / n as f64 * width;
    let (ln_lo, ln_span) = (ln(lo), ln(hi) - ln(lo));
    let uy = |v: f64| UPPER.1 - (ln(v) - ln_lo) / ln_span * (UPPER.1 - UPPER.0);
    let x_max = n as f64 + 0.5;
    let lx = |x: f64| LEFT + x / x_max * width;
    let y_max = max_points * 1.05;
    let ly = |v: f64| LOWER.1 - v / y_max * (LOWER.1 - LOWER.0);

    let o = out;
    // The markers are sized by the stroke width of the path that draws
    // them (10 in the data's tenths: a pixel), unclipped.
    o.push_str(
        "<svg width=\"1100\" height=\"620\" viewBox=\"0 0 1100 620\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">\n\
         <defs><marker id=\"mark-p\" overflow=\"visible\">\
         <circle r=\"3\" fill=\"#0072B2\"/></marker>\
         <marker id=\"mark-q\" overflow=\"visible\">\
         <path d=\"M0-4L3.5 2H-3.5Z\" fill=\"#D55E00\"/></marker></defs>\n\
         <rect width=\"1100\" height=\"620\" fill=\"#fff\"/>\n",
    );

    // The upper panel: the throws.
    let x_ticks = linear_ticks(1.0, n as f64, ux);
    // The powers of ten in lo..=hi (lo is whole, at least 1).
    let lo_int = lo as u64;
    let lo_exp = lo_int.ilog10() + u32::from(10u64.pow(lo_int.ilog10()) != lo_int);
    let hi_exp = (hi.floor() as u64).max(1).ilog10();
    let decades = f64::from(hi_exp.saturating_add(1).saturating_sub(lo_exp));
    let exp_step = (decades / MAX_TICKS).ceil().max(1.0) as usize;
    let mut y_ticks = Ticks::new();
    for e in (lo_exp..=hi_exp).step_by(exp_step) {
        let v = 10u64.pow(e);
        y_ticks.push((v, uy(v as f64)));
    }
    // Past a million, powers of ten as `1e7`: the labels fit left of the axis.
    let y_label = |o: &mut String, v: u64| match v.checked_ilog10() {
        Some(e) if e > 6 => {
            o.push_str("1e");
            push_unsigned(o, u64::from(e));
        }
        _ => push_unsigned(o, v),
    };
    let caption = |o: &mut String| {
        o.push_str("Throws: ");
        escape(o, p);
        o.push_str(" (P) against ");
        escape(o, q);
        o.push_str(" (Q)");
    };
    panel(
        o,
        UPPER,
        &caption,
        "number thrown",
        &x_ticks,
        &y_ticks,
        &y_label,
    );
    // The data, in tenths of a pixel.
    let upper_at = |i: usize, t: i64| (tenths(ux((i + 1) as f64)), tenths(uy(clamp(t))));
    o.push_str("<g transform=\"scale(.1)\" fill=\"none\" stroke-width=\"10\">\n");
    for (k, attrs) in [
        (0, " stroke=\"#0072B2\" stroke-width=\"20\""),
        (1, " stroke=\"#D55E00\""),
    ] {
        let t = |i: usize| clamp(throws[i][k]);
        let start = o.len();
        line(
            o,
            attrs,
            throws.len(),
            |i| upper_at(i, throws[i][k]),
            |i| t(i - 1) == t(i) && t(i) == t(i + 1),
        );
        own[k] += o.len() - start;
    }
    // The won throws: a marker at each vertex of an unstroked path.
    for (who, attrs) in [
        (
            Player::P,
            " marker-start=\"url(#mark-p)\" marker-mid=\"url(#mark-p)\" marker-end=\"url(#mark-p)\"",
        ),
        (
            Player::Q,
            " marker-start=\"url(#mark-q)\" marker-mid=\"url(#mark-q)\" marker-end=\"url(#mark-q)\"",
        ),
    ] {
        let mut won = throws
            .iter()
            .enumerate()
            .filter(|&(_, &[tp, tq])| judge(tp, tq).winner == Some(who))
            .map(|(i, &[tp, tq])| upper_at(i, if who == Player::P { tp } else { tq }))
            .peekable();
        if won.peek().is_none() {
            continue;
        }
        let start = o.len();
        o.push_str("<path");
        o.push_str(attrs);
        o.push_str(" d=\"");
        let mut d = PathData::default();
        for at in won {
            d.to(o, at);
        }
        o.push_str("\"/>\n");
        own[usize::from(who == Player::Q)] += o.len() - start;
    }
    o.push_str("</g>\n");
    // The legend, in the lower left corner: a line and a marker per side.
    let longest = p.chars().count().max(q.chars().count()) as f64;
    let legend_w = (7.0 * longest + 150.0).min(width - 10.0);
    o.push_str("<rect x=\"75\" y=\"298\" width=\"");
    coord(o, legend_w);
    o.push_str("\" height=\"51\" fill=\"#fff\" fill-opacity=\"0.9\" stroke=\"#000\"/>\n");
    o.push_str(
        "<path stroke=\"#0072B2\" stroke-width=\"2\" d=\"M77 314h20\"/>\
         <circle cx=\"87\" cy=\"314\" r=\"3\" fill=\"#0072B2\"/>\n\
         <path stroke=\"#D55E00\" d=\"M77 333h20\"/>\
         <path d=\"M87 329l3.5 6h-7Z\" fill=\"#D55E00\"/>\n\
         <g font-size=\"12\">\n",
    );
    for (y, side, name, mark) in [
        (314.0, "P: ", p, " (● its wins)"),
        (333.0, "Q: ", q, " (▲ its wins)"),
    ] {
        text_start(o, 105.0, y, " dy=\"0.4em\">");
        o.push_str(side);
        escape(o, name);
        o.push_str(mark);
        o.push_str("</text>\n");
    }
    o.push_str("</g>\n");

    // The lower panel: the points so far.
    let x_ticks = linear_ticks(0.0, n as f64, lx);
    let y_ticks = linear_ticks(0.0, y_max, ly);
    panel(
        o,
        LOWER,
        &|o: &mut String| o.push_str("Points so far"),
        "points",
        &x_ticks,
        &y_ticks,
        &|o: &mut String, v: u64| push_unsigned(o, v),
    );
    o.push_str("<g transform=\"scale(.1)\" fill=\"none\" stroke-width=\"10\">\n");
    for (k, attrs) in [
        (0, " stroke=\"#0072B2\" stroke-width=\"20\""),
        (1, " stroke=\"#D55E00\""),
    ] {
        // Whole numbers: a point is on the line between its neighbours
        // when it gained what the next one gains. The points so far are
        // summed as the line goes (the points are asked for in order).
        let (mut so_far, mut summed) = (0u64, 0usize);
        line(
            o,
            attrs,
            throws.len() + 1,
            |i| {
                // The points before throw i, the ones left out too.
                while summed < i {
                    so_far = so_far.saturating_add(u64::from(gain(summed)[k]));
                    summed += 1;
                }
                (tenths(lx(i as f64)), tenths(ly(so_far as f64)))
            },
            |i| gain(i - 1)[k] == gain(i)[k],
        );
    }
    o.push_str("</g>\n");
    // The last values at the lines' end, the lower one below its line.
    let x = lx(throws.len() as f64);
    for (k, name, color) in [(0, "P ", P_HEX), (1, "Q ", Q_HEX)] {
        let below = final_points[k] < final_points[1 - k];
        text_start(
            o,
            x,
            ly(final_points[k] as f64),
            " font-size=\"13\" text-anchor=\"end\" fill=\"",
        );
        o.push_str(color);
        o.push_str(if below {
            "\" dy=\"1em\">"
        } else {
            "\" dy=\"-0.3em\">"
        });
        o.push_str(name);
        push_unsigned(o, final_points[k]);
        o.push_str("</text>\n");
    }
    o.push_str("</svg>");
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_written_as_display_writes_them() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            12345,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut out = String::from("x");
            push_integer(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }

    #[test]
    fn coordinates_have_at_most_one_decimal() {
        let mut s = String::new();
        for v in [0.0, 1.04, 1.05, 12.25, -0.3, -2.5, 1089.0, 352.96] {
            coord(&mut s, v);
            s.push(' ');
        }
        assert_eq!(s, "0 1 1.1 12.3 -0.3 -2.5 1089 353 ");
    }

    #[test]
    fn the_logarithm_is_the_libm_one_but_for_the_last_bits() {
        let mut v = 1.0f64;
        while v < 1e19 {
            for w in [v, v + 1.0, v * 1.5, v * 7.3] {
                let (ours, libm) = (ln(w), w.ln());
                assert!(
                    (ours - libm).abs() <= 4e-15 * libm.abs().max(1.0),
                    "{w}: {ours} against {libm}"
                );
            }
            v *= 3.1;
        }
        assert_eq!(ln(1.0), 0.0);
        for (j, &ln_c) in LN_TABLE.iter().enumerate() {
            let c = 1.0 + j as f64 / 128.0;
            assert!((ln_c - c.ln()).abs() <= 1e-15, "{j}");
        }
    }

    #[test]
    fn path_data_is_relative_and_parted_by_signs_or_spaces() {
        let mut out = String::new();
        let mut d = PathData::default();
        for at in [(100, 200), (110, 150), (121, 160), (121, 160), (100, 0)] {
            d.to(&mut out, at);
        }
        assert_eq!(out, "M100 200l10-50 11 10 0 0-21-160");
        let mut one = String::new();
        PathData::default().to(&mut one, (-5, 7));
        assert_eq!(one, "M-5 7", "no `l` without a step");
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        let steps: Vec<u64> = [0.0, 9.0, 10.0, 11.0, 45.0, 100.0, 1000.0, 1e30]
            .iter()
            .map(|&s| nice_step(s))
            .collect();
        assert_eq!(steps[..6], [1, 1, 1, 2, 5, 10]);
        assert_eq!(steps[6], 100);
        assert_eq!(steps[7], u64::MAX);
    }

    #[test]
    fn text_is_escaped_and_the_plot_is_deterministic() {
        let throws = [[3, 5], [4, 5], [12288, 1]];
        let svg = game_svg("<b>&\"x", "q", &throws, 1, 12288);
        assert!(!svg.contains("<b>"));
        assert!(svg.contains("&lt;b&gt;&amp;&quot;x"));
        assert_eq!(svg, game_svg("<b>&\"x", "q", &throws, 1, 12288));
    }

    /// The `d` of each path in the data's groups: the upper panel's two
    /// lines and its markers' paths, then the lower panel's two lines.
    fn data_paths(svg: &str) -> Vec<&str> {
        svg.split("<g transform=\"scale(.1)\"")
            .skip(1)
            .flat_map(|g| g[..g.find("</g>").unwrap()].lines().skip(1))
            .map(|l| &l[l.find(" d=\"").unwrap() + 4..l.rfind('"').unwrap()])
            .collect()
    }

    #[test]
    fn points_on_a_straight_line_are_left_out() {
        // A constant game: each line is its two ends, and no throw is won.
        let svg = game_svg("p", "q", &[[7, 7]; 100], 1, 12288);
        let paths = data_paths(&svg);
        assert_eq!(paths.len(), 4, "{paths:?}");
        for d in paths {
            let numbers = d
                .split(|c: char| !c.is_ascii_digit())
                .filter(|t| !t.is_empty());
            assert_eq!(numbers.count(), 4, "{d}");
        }
    }

    #[test]
    fn each_won_throw_is_a_vertex_of_its_winners_markers_path() {
        // P wins throws 1 and 3 (5 ≤ 2·3), Q throw 2; throw 4 is a draw.
        let svg = game_svg("p", "q", &[[5, 3], [9, 4], [6, 4], [2, 2]], 1, 12288);
        let paths = data_paths(&svg);
        assert_eq!(paths.len(), 6, "{paths:?}");
        let vertices = |d: &str| 1 + d.matches([' ', '-']).count() / 2;
        assert_eq!(vertices(paths[2]), 2, "P's: {}", paths[2]);
        assert_eq!(vertices(paths[3]), 1, "Q's: {}", paths[3]);
        assert!(svg.contains("marker-mid=\"url(#mark-p)\" marker-end=\"url(#mark-p)\" d="));
    }
}
