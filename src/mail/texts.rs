//! The texts of the mails, rendered from the handlebars templates in
//! `templates/mail/` (strict mode: a missing value is an error, not an empty
//! string; no HTML escaping). One template per kind of mail.

use std::sync::OnceLock;

use handlebars::Handlebars;
use serde::Serialize;

/// Every mail template: (name, text).
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "check_report",
        include_str!("../../templates/compile_report.hbs"),
    ),
    (
        "registration_accepted",
        include_str!("../../templates/mail/registration_accepted.hbs"),
    ),
    (
        "registration_rejected",
        include_str!("../../templates/mail/registration_rejected.hbs"),
    ),
    (
        "registration_exists",
        include_str!("../../templates/mail/registration_exists.hbs"),
    ),
    (
        "compile_report",
        include_str!("../../templates/mail/compile_report.hbs"),
    ),
    (
        "compile_refused",
        include_str!("../../templates/mail/compile_refused.hbs"),
    ),
    (
        "software",
        include_str!("../../templates/mail/software.hbs"),
    ),
    ("help", include_str!("../../templates/mail/help.hbs")),
    (
        "too_large",
        include_str!("../../templates/mail/too_large.hbs"),
    ),
    (
        "organizer_alert",
        include_str!("../../templates/mail/organizer_alert.hbs"),
    ),
    ("lap", include_str!("../../templates/mail/lap.hbs")),
    ("lgp", include_str!("../../templates/mail/lgp.hbs")),
    ("dgp", include_str!("../../templates/mail/dgp.hbs")),
    ("grp", include_str!("../../templates/mail/grp.hbs")),
    ("grg", include_str!("../../templates/mail/grg.hbs")),
    ("grr", include_str!("../../templates/mail/grr.hbs")),
    ("rsm", include_str!("../../templates/mail/rsm.hbs")),
    (
        "disqualified",
        include_str!("../../templates/mail/disqualified.hbs"),
    ),
    ("final", include_str!("../../templates/mail/final.hbs")),
    (
        "no_strategy",
        include_str!("../../templates/mail/no_strategy.hbs"),
    ),
    (
        "organizer_start",
        include_str!("../../templates/mail/organizer_start.hbs"),
    ),
    ("refused", include_str!("../../templates/mail/refused.hbs")),
    ("status", include_str!("../../templates/mail/status.hbs")),
    (
        "preference",
        include_str!("../../templates/mail/preference.hbs"),
    ),
    ("forward", include_str!("../../templates/mail/forward.hbs")),
    (
        "auth_reset",
        include_str!("../../templates/mail/auth_reset.hbs"),
    ),
    (
        "address_changed",
        include_str!("../../templates/mail/address_changed.hbs"),
    ),
    (
        "withdrawn",
        include_str!("../../templates/mail/withdrawn.hbs"),
    ),
];

fn registry() -> &'static Handlebars<'static> {
    static REG: OnceLock<Handlebars<'static>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut h = Handlebars::new();
        h.set_strict_mode(true);
        h.register_escape_fn(handlebars::no_escape);
        for (name, text) in TEMPLATES {
            h.register_template_string(name, *text)
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
        }
        h
    })
}

/// Renders mail template `name` with `data`.
pub fn render<T: Serialize>(name: &str, data: &T) -> Result<String, handlebars::RenderError> {
    registry().render(name, data)
}
