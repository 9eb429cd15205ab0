//! Scratch runner for tests/it/mailstack.rs (temporary; removed before handing back).
#[path = "it/mailstack.rs"]
mod mailstack;
#[test]
fn zz_print_errors() {
    use knobeln::config::TlsMode;
    use knobeln::mail::transport::imap::ImapPoller;
    use knobeln::mail::transport::smtp::SmtpSender;
    let stack = mailstack::mail_stack();
    let mut cfg = stack.smtp_config();
    for t in [TlsMode::Starttls, TlsMode::Tls] {
        cfg.tls = t;
        eprintln!(
            "{t:?}: {:?}",
            SmtpSender::new(&cfg).unwrap().send_raw(
                "a@contest.example",
                &["b@contest.example".into()],
                b"x"
            )
        );
    }
    let mut c = stack.imap_config("x@contest.example");
    for t in [TlsMode::Starttls, TlsMode::Tls] {
        c.tls = t;
        eprintln!("{t:?}: {:?}", ImapPoller::connect(&c).map(|_| ()));
    }
    c.tls = TlsMode::None;
    c.password = Some("bad".into());
    eprintln!("{:?}", ImapPoller::connect(&c).map(|_| ()));
    c.password = Some("knobeln".into());
    c.mailbox = "Nope".into();
    eprintln!(
        "{:?}",
        ImapPoller::connect(&c).unwrap().fetch_new(None, 0, 1)
    );
    cfg.tls = TlsMode::None;
    cfg.port = 1;
    eprintln!(
        "{:?}",
        SmtpSender::new(&cfg).unwrap().send_raw(
            "a@contest.example",
            &["b@contest.example".into()],
            b"x"
        )
    );
}
