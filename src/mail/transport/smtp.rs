//! Sending an already rendered RFC 5322 message over SMTP: the outgoing
//! half of the `imap` transport.
//!
//! [`SmtpSender`] wraps lettre's blocking `SmtpTransport` (plain text on
//! loopback, STARTTLS, or TLS from the first byte; login when a user is
//! configured) and sends raw bytes with an explicit envelope. A send is `Ok`
//! only once the server has accepted the message for every recipient.
//! Failures are sorted for the outbox: [`SendError::Transient`] (try again
//! later) and [`SendError::Permanent`] (give up).
//!
//! The bytes go out as they are, except that bare LF line ends become CRLF
//! (SMTP's line end) and one final line end is folded into the end of DATA,
//! so the receiver stores exactly the given message.
//!
//! [`SmtpSender::probe`] tells whether the server can be reached at all
//! (asked after a transient failure, so that an outage is not charged to
//! every queued mail).
//!
//! Deliberately not here: rendering or parsing messages, queueing, counting
//! attempts and backing off (the outbox and `outage` do that), connection
//! pooling (one connection per message is plenty for a contest's mail
//! volume).

use std::time::Duration;

use lettre::address::{Address, Envelope};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{SmtpTransport, Transport};

use crate::config::{self, SmtpConfig, TlsMode};

/// How long one SMTP command may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Worth retrying later: the server could not be reached, the
    /// connection broke or timed out, TLS failed, or a 4xx reply.
    #[error("transient SMTP failure: {0}")]
    Transient(String),
    /// Retrying will not help: a 5xx reply, an unusable address or
    /// configuration.
    #[error("permanent SMTP failure: {0}")]
    Permanent(String),
}

/// A configured SMTP client; every [`SmtpSender::send_raw`] opens its own
/// connection.
#[derive(Clone)]
pub struct SmtpSender {
    transport: SmtpTransport,
    /// `host:port`, for messages.
    addr: String,
}

impl std::fmt::Debug for SmtpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSender")
            .field("addr", &self.addr)
            .finish()
    }
}

impl SmtpSender {
    /// Builds the client (no connection is made yet). The password comes
    /// from the config (`password`, else the first line of `password_file`;
    /// the environment override is applied when the config is loaded).
    pub fn new(cfg: &SmtpConfig) -> Result<SmtpSender, SendError> {
        let addr = format!("{}:{}", cfg.host, cfg.port);
        let tls_params = || {
            TlsParameters::new(cfg.host.clone())
                .map_err(|e| SendError::Permanent(format!("TLS setup for {addr}: {e}")))
        };
        let builder = SmtpTransport::builder_dangerous(cfg.host.clone())
            .port(cfg.port)
            .timeout(Some(TIMEOUT));
        let builder = match cfg.tls {
            TlsMode::None => builder.tls(Tls::None),
            TlsMode::Starttls => builder.tls(Tls::Required(tls_params()?)),
            TlsMode::Tls => builder.tls(Tls::Wrapper(tls_params()?)),
        };
        let builder = match &cfg.user {
            None => builder,
            Some(user) => {
                let password = config::secret(&cfg.password, &cfg.password_file)
                    .map_err(|e| SendError::Permanent(format!("SMTP password: {e}")))?
                    .ok_or_else(|| {
                        SendError::Permanent(format!(
                            "SMTP user {user} has no password \
                             (set password, password_file or KNOBELN_SMTP_PASSWORD)"
                        ))
                    })?;
                builder.credentials(Credentials::new(user.clone(), password))
            }
        };
        Ok(SmtpSender {
            transport: builder.build(),
            addr,
        })
    }

    /// Sends raw bytes with the given envelope (`envelope_from` empty: the
    /// null sender `<>`, as for bounces); `Ok` only after the server
    /// accepted the message. A 5xx reply for any recipient fails the whole
    /// message permanently.
    pub fn send_raw(
        &self,
        envelope_from: &str,
        to: &[String],
        raw: &[u8],
    ) -> Result<(), SendError> {
        let from = if envelope_from.is_empty() {
            None
        } else {
            Some(parse_address(envelope_from, "sender")?)
        };
        let rcpt = to
            .iter()
            .map(|a| parse_address(a, "recipient"))
            .collect::<Result<Vec<_>, _>>()?;
        let envelope = Envelope::new(from, rcpt)
            .map_err(|e| SendError::Permanent(format!("envelope: {e}")))?;
        let data = wire_data(raw);
        self.transport
            .send_raw(&envelope, &data)
            .map(drop)
            .map_err(|e| classify(&e, &self.addr))
    }
}

impl SmtpSender {
    /// Whether the server answers at all: connects, greets and says
    /// goodbye (`Err` with the cause when it cannot be reached, TLS fails or
    /// it refuses the login).
    pub fn probe(&self) -> Result<(), String> {
        match self.transport.test_connection() {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!("{}: the server does not answer", self.addr)),
            Err(e) => Err(format!("{}: {}", self.addr, error_chain(&e))),
        }
    }

    /// `host:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }
}

fn parse_address(a: &str, role: &str) -> Result<Address, SendError> {
    a.trim()
        .parse::<Address>()
        .map_err(|e| SendError::Permanent(format!("{role} address {a:?}: {e}")))
}

/// The message as it goes into DATA: CRLF line ends throughout, without the
/// final line end (the client adds CRLF `.` CRLF; with one of our own, the
/// stored message would gain an empty last line).
fn wire_data(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 32 + 2);
    let mut prev = 0u8;
    for &b in raw {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    if out.ends_with(b"\r\n") {
        out.truncate(out.len() - 2);
    }
    out
}

/// 5xx replies and mistakes on our side are permanent, all else transient.
fn classify(e: &lettre::transport::smtp::Error, addr: &str) -> SendError {
    let text = error_chain(e);
    if e.is_permanent() || e.is_client() {
        SendError::Permanent(format!("{addr}: {text}"))
    } else {
        SendError::Transient(format!("{addr}: {text}"))
    }
}

/// The error and its causes, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_data_makes_crlf_and_drops_the_final_line_end() {
        assert_eq!(wire_data(b"A: b\n\nbody\n"), b"A: b\r\n\r\nbody");
        assert_eq!(wire_data(b"A: b\r\n\r\nbody\r\n"), b"A: b\r\n\r\nbody");
        assert_eq!(wire_data(b"A: b\r\n\r\nbody"), b"A: b\r\n\r\nbody");
        assert_eq!(wire_data(b"A: b\r\n\r\nx\r\n\r\n"), b"A: b\r\n\r\nx\r\n");
    }

    #[test]
    fn a_refused_connection_is_transient() {
        // A loopback port that was free a moment ago: nothing listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let sender = SmtpSender::new(&SmtpConfig {
            host: "127.0.0.1".into(),
            port,
            tls: TlsMode::None,
            user: None,
            password: None,
            password_file: None,
        })
        .unwrap();
        let err = sender
            .send_raw(
                "a@contest.example",
                &["b@contest.example".into()],
                b"Subject: x\r\n\r\nx\r\n",
            )
            .unwrap_err();
        assert!(matches!(err, SendError::Transient(_)), "{err:?}");
    }

    #[test]
    fn bad_addresses_are_permanent() {
        let sender = SmtpSender::new(&SmtpConfig {
            host: "127.0.0.1".into(),
            port: 1,
            tls: TlsMode::None,
            user: None,
            password: None,
            password_file: None,
        })
        .unwrap();
        let err = sender
            .send_raw("a@x", &["not an address".into()], b"x")
            .unwrap_err();
        assert!(matches!(err, SendError::Permanent(_)), "{err:?}");
        let err = sender.send_raw("a@x", &[], b"x").unwrap_err();
        assert!(matches!(err, SendError::Permanent(_)), "{err:?}");
    }
}
