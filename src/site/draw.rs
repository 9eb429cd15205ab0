//! Small helpers for drawing static SVG by hand (the game pictures of the
//! bot disciplines): escaping, numbers without float noise.

/// Text for HTML and SVG: `&`, `<`, `>`, `"` escaped.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
