//! A game's plot, written straight into compact SVG text ([`game_svg`]):
//! the upper panel the number each side threw per throw (logarithmic
//! scale; P a thick blue line, Q a thin vermillion one), each won throw
//! marked on the winner's number (P a circle, Q a triangle), with a legend;
//! the lower panel the points of each side so far, their last values
//! written at the line's end.
//!
//! Written for size and speed, since a contest has one such plot per game:
//! one `<polyline>` per series with coordinates rounded to one decimal
//! (points that lie on a straight line between their neighbours left out),
//! the grid and the axes one `<path>` each, markers `<use>` of one
//! `<circle>` and one `<path>` defined once per plot, the font set once on
//! a group. Text is real SVG `<text>`, escaped by
//! [`crate::draw::escape_into`]; colors are [`super::plots`]' P and Q
//! colors (the Okabe–Ito blue and vermillion).
//!
//! Pure: data in, text out. Not here: the page around the plot
//! (`super::direct::game_html`), reading the throws (`super`).
//!
//! **Invariant:** the same data gives the same SVG, byte for byte.

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

/// `v` with at most one decimal, without a trailing `.0`.
fn coord(out: &mut String, v: f64) {
    let tenths = (v * 10.0).round() as i64;
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

/// `n` in decimal digits, written without the formatting machinery (a
/// game page writes some thousands of numbers: `write!` was a tenth of the
/// site's CPU with game pages).
fn push_integer(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut rest = n.unsigned_abs();
    let mut first = digits.len();
    loop {
        first -= 1;
        digits[first] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[first..].iter().map(|&d| char::from(d)));
}

/// One point of a path or polyline: `x,y`.
fn point(out: &mut String, x: f64, y: f64) {
    coord(out, x);
    out.push(',');
    coord(out, y);
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

/// `<text>` at `(x, y)` with the given extra attributes, its content escaped.
fn text(out: &mut String, x: f64, y: f64, attrs: &str, content: &str) {
    out.push_str("<text x=\"");
    coord(out, x);
    out.push_str("\" y=\"");
    coord(out, y);
    out.push('"');
    out.push_str(attrs);
    out.push('>');
    escape(out, content);
    out.push_str("</text>\n");
}

/// A panel's frame: its caption, the axis descriptions, the grid lines
/// and tick labels at `x_ticks` and `y_ticks` (value, pixel), the axes.
fn panel(
    out: &mut String,
    (top, bottom): (f64, f64),
    caption: &str,
    y_desc: &str,
    x_ticks: &[(u64, f64)],
    y_ticks: &[(u64, f64)],
    y_label: &dyn Fn(u64) -> String,
) {
    let mid_x = (LEFT + RIGHT) / 2.0;
    text(
        out,
        WIDTH / 2.0,
        top - 20.0,
        " font-size=\"15\" text-anchor=\"middle\" dy=\"0.8em\"",
        caption,
    );
    let mid_y = (top + bottom) / 2.0;
    let mut rotated =
        String::from(" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(270,10,");
    coord(&mut rotated, mid_y);
    rotated.push_str(")\" dy=\"0.8em\"");
    text(out, 10.0, mid_y, &rotated, y_desc);
    text(
        out,
        mid_x,
        bottom + 37.0,
        " font-size=\"13\" text-anchor=\"middle\"",
        "throw",
    );
    // The grid: one path of light lines.
    out.push_str("<path stroke=\"#000\" stroke-opacity=\"0.2\" d=\"");
    for &(_, x) in x_ticks {
        out.push('M');
        point(out, x, bottom);
        out.push('V');
        coord(out, top);
    }
    for &(_, y) in y_ticks {
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
    for &(_, y) in y_ticks {
        out.push('M');
        point(out, LEFT - 5.5, y);
        out.push_str("h5");
    }
    for &(_, x) in x_ticks {
        out.push('M');
        point(out, x, bottom + 0.5);
        out.push_str("v5");
    }
    out.push_str("\"/>\n");
    // The tick labels.
    out.push_str("<g font-size=\"12\" text-anchor=\"end\">\n");
    for &(v, y) in y_ticks {
        text(out, LEFT - 9.0, y, " dy=\"0.4em\"", &y_label(v));
    }
    out.push_str("</g>\n<g font-size=\"12\" text-anchor=\"middle\">\n");
    for &(v, x) in x_ticks {
        text(out, x, bottom + 11.0, " dy=\"0.8em\"", &v.to_string());
    }
    out.push_str("</g>\n");
}

/// The ticks of a linear axis over `lo..=hi` (whole numbers only) mapped
/// to pixels by `px`.
fn linear_ticks(lo: f64, hi: f64, px: impl Fn(f64) -> f64) -> Vec<(u64, f64)> {
    let step = nice_step(hi - lo);
    let first = (lo.max(0.0) / step as f64).ceil() as u64;
    let mut ticks = Vec::new();
    let mut k = first;
    while let Some(v) = k.checked_mul(step) {
        if v as f64 > hi {
            break;
        }
        ticks.push((v, px(v as f64)));
        k += 1;
    }
    ticks
}

/// A polyline through the `n` points `at` gives (pixels), leaving out every
/// point that `between` (deciding on the data, exactly) says lies on the
/// straight line between its neighbours.
fn polyline(
    out: &mut String,
    attrs: &str,
    n: usize,
    at: impl Fn(usize) -> (f64, f64),
    between: impl Fn(usize) -> bool,
) {
    out.push_str("<polyline fill=\"none\"");
    out.push_str(attrs);
    out.push_str(" points=\"");
    for i in 0..n {
        if i > 0 && i + 1 < n && between(i) {
            continue;
        }
        if i > 0 {
            out.push(' ');
        }
        let (x, y) = at(i);
        point(out, x, y);
    }
    out.push_str("\"/>\n");
}

/// The plot of a game between `p` and `q` (the teams' names), throw by
/// throw, with throws allowed in `a..=b` (see the module's description).
/// The site writes the plot into its page with [`write_game_svg`].
#[cfg(test)]
pub fn game_svg(p: &str, q: &str, throws: &[[i64; 2]], a: i64, b: i64) -> String {
    // About 12 bytes a point of each of four lines, 35 a marker.
    let mut out = String::with_capacity(4096 + 80 * throws.len());
    write_game_svg(&mut out, p, q, throws, a, b);
    out
}

/// [`game_svg`], appended to `out`.
pub fn write_game_svg(out: &mut String, p: &str, q: &str, throws: &[[i64; 2]], a: i64, b: i64) {
    let n = throws.len().max(1);
    // The upper panel's value range (throws outside are drawn at its edge).
    let lo = a.max(1) as f64;
    let hi = (b.max(a.saturating_add(1)) as f64).max(lo * 10.0_f64.powf(0.1));
    let clamp = |t: i64| (t as f64).clamp(lo, hi);
    let mut cum = Vec::with_capacity(throws.len() + 1);
    cum.push([0u64; 2]);
    let mut wins: Vec<(usize, Player, i64)> = Vec::new();
    for (i, &[tp, tq]) in throws.iter().enumerate() {
        let o = judge(tp, tq);
        let pts = o.points_of();
        let last = cum[i];
        cum.push([
            last[0].saturating_add(u64::from(pts[0])),
            last[1].saturating_add(u64::from(pts[1])),
        ]);
        if let Some(w) = o.winner {
            wins.push((i + 1, w, if w == Player::P { tp } else { tq }));
        }
    }
    let final_points = cum.last().copied().unwrap_or([0, 0]);
    let max_points = final_points[0].max(final_points[1]).max(1) as f64;

    // Pixels: the upper panel's x from 0.5 to n + 0.5, y logarithmic; the
    // lower panel's x from 0 to n + 0.5, y from 0 to 1.05 × the most points.
    let width = RIGHT - LEFT;
    let ux = |x: f64| LEFT + (x - 0.5) / n as f64 * width;
    let (ln_lo, ln_span) = (lo.ln(), hi.ln() - lo.ln());
    let uy = |v: f64| UPPER.1 - (v.ln() - ln_lo) / ln_span * (UPPER.1 - UPPER.0);
    let x_max = n as f64 + 0.5;
    let lx = |x: f64| LEFT + x / x_max * width;
    let y_max = max_points * 1.05;
    let ly = |v: f64| LOWER.1 - v / y_max * (LOWER.1 - LOWER.0);

    let o = out;
    o.push_str(
        "<svg width=\"1100\" height=\"620\" viewBox=\"0 0 1100 620\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">\n\
         <defs><circle id=\"mark-p\" r=\"3\" fill=\"#0072B2\"/>\
         <path id=\"mark-q\" d=\"M0-4L3.5 2H-3.5Z\" fill=\"#D55E00\"/></defs>\n\
         <rect width=\"1100\" height=\"620\" fill=\"#fff\"/>\n",
    );

    // The upper panel: the throws.
    let x_ticks = linear_ticks(1.0, n as f64, ux);
    let (lo_exp, hi_exp) = (lo.log10().ceil() as i32, hi.log10().floor() as i32);
    let exp_step = (f64::from(hi_exp - lo_exp + 1) / MAX_TICKS).ceil().max(1.0) as usize;
    let y_ticks: Vec<(u64, f64)> = (lo_exp..=hi_exp)
        .step_by(exp_step)
        .map(|e| {
            let v = 10f64.powi(e);
            (v as u64, uy(v))
        })
        .collect();
    // Past a million, powers of ten as `1e7`: the labels fit left of the axis.
    let y_label = |v: u64| match v.checked_ilog10() {
        Some(e) if e > 6 => format!("1e{e}"),
        _ => v.to_string(),
    };
    let mut caption = String::with_capacity(p.len() + q.len() + 32);
    caption.push_str("Throws: ");
    caption.push_str(p);
    caption.push_str(" (P) against ");
    caption.push_str(q);
    caption.push_str(" (Q)");
    panel(
        o,
        UPPER,
        &caption,
        "number thrown",
        &x_ticks,
        &y_ticks,
        &y_label,
    );
    for (k, attrs) in [
        (0, " stroke=\"#0072B2\" stroke-width=\"2\""),
        (1, " stroke=\"#D55E00\""),
    ] {
        let t = |i: usize| clamp(throws[i][k]);
        polyline(
            o,
            attrs,
            throws.len(),
            |i| (ux((i + 1) as f64), uy(t(i))),
            |i| t(i - 1) == t(i) && t(i) == t(i + 1),
        );
    }
    for (who, id) in [(Player::P, "#mark-p"), (Player::Q, "#mark-q")] {
        for &(i, _, t) in wins.iter().filter(|w| w.1 == who) {
            o.push_str("<use href=\"");
            o.push_str(id);
            o.push_str("\" x=\"");
            coord(o, ux(i as f64));
            o.push_str("\" y=\"");
            coord(o, uy(clamp(t)));
            o.push_str("\"/>\n");
        }
    }
    // The legend, in the lower left corner: a line and a marker per side.
    let longest = p.chars().count().max(q.chars().count()) as f64;
    let legend_w = (7.0 * longest + 150.0).min(width - 10.0);
    o.push_str("<rect x=\"75\" y=\"298\" width=\"");
    coord(o, legend_w);
    o.push_str("\" height=\"51\" fill=\"#fff\" fill-opacity=\"0.9\" stroke=\"#000\"/>\n");
    o.push_str(
        "<path stroke=\"#0072B2\" stroke-width=\"2\" d=\"M77 314h20\"/>\
         <use href=\"#mark-p\" x=\"87\" y=\"314\"/>\n\
         <path stroke=\"#D55E00\" d=\"M77 333h20\"/>\
         <use href=\"#mark-q\" x=\"87\" y=\"333\"/>\n\
         <g font-size=\"12\">\n",
    );
    let mut label = String::with_capacity(longest as usize + 24);
    for (y, side, name, mark) in [
        (314.0, "P: ", p, " (● its wins)"),
        (333.0, "Q: ", q, " (▲ its wins)"),
    ] {
        label.clear();
        label.push_str(side);
        label.push_str(name);
        label.push_str(mark);
        text(o, 105.0, y, " dy=\"0.4em\"", &label);
    }
    o.push_str("</g>\n");

    // The lower panel: the points so far.
    let x_ticks = linear_ticks(0.0, n as f64, lx);
    let y_ticks = linear_ticks(0.0, y_max, ly);
    panel(
        o,
        LOWER,
        "Points so far",
        "points",
        &x_ticks,
        &y_ticks,
        &|v: u64| v.to_string(),
    );
    for (k, attrs) in [
        (0, " stroke=\"#0072B2\" stroke-width=\"2\""),
        (1, " stroke=\"#D55E00\""),
    ] {
        // Whole numbers: a point is on the line between its neighbours
        // when it gained what the next one gains.
        let c = |i: usize| cum[i][k];
        polyline(
            o,
            attrs,
            cum.len(),
            |i| (lx(i as f64), ly(c(i) as f64)),
            |i| c(i) - c(i - 1) == c(i + 1) - c(i),
        );
    }
    // The last values at the lines' end, the lower one below its line.
    let x = lx((cum.len() - 1) as f64);
    for (k, name, color) in [(0, "P ", P_HEX), (1, "Q ", Q_HEX)] {
        let below = final_points[k] < final_points[1 - k];
        let attrs = format!(
            " font-size=\"13\" text-anchor=\"end\" fill=\"{color}\"{}",
            if below {
                " dy=\"1em\""
            } else {
                " dy=\"-0.3em\""
            }
        );
        text(
            o,
            x,
            ly(final_points[k] as f64),
            &attrs,
            &format!("{name}{}", final_points[k]),
        );
    }
    o.push_str("</svg>");
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

    #[test]
    fn points_on_a_straight_line_are_left_out() {
        // A constant game: each line is its two ends.
        let svg = game_svg("p", "q", &[[7, 7]; 100], 1, 12288);
        for line in svg.lines().filter(|l| l.starts_with("<polyline")) {
            assert_eq!(line.matches(',').count(), 2, "{line}");
        }
    }
}
