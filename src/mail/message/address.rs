//! Whether a reply can go to an address ([`check_answerable`]: the one
//! address grammar, which the registration form's check also ends with),
//! and why not ([`Unanswerable`]).
//!
//! Not here: finding the address in a mail (`parse.rs`, `headers.rs`) or
//! deciding whether a machine wrote it (`automatic.rs`).

/// Why a mail's sender cannot be answered: its address is malformed, or
/// there is none. Such a mail is kept and dropped, never retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswerable {
    #[error("no From or Reply-To address")]
    NoAddress,
    #[error("the address has {0} characters, more than 254")]
    AddressTooLong(usize),
    #[error("the local part has {0} characters, more than 64")]
    LocalPartTooLong(usize),
    #[error("the local part is not a dot-atom (empty, a dot at an end, two dots, or a character outside RFC 5322's atext)")]
    BadLocalPart,
    #[error("the domain is an address literal ([...]), not a name")]
    DomainLiteral,
    #[error("the domain is not a host name (labels of letters, digits and hyphens, at least two)")]
    BadDomain,
}

impl Unanswerable {
    /// A stable snake_case name (for tests and the corpus).
    pub fn kind(&self) -> &'static str {
        match self {
            Unanswerable::NoAddress => "no_address",
            Unanswerable::AddressTooLong(_) => "address_too_long",
            Unanswerable::LocalPartTooLong(_) => "local_part_too_long",
            Unanswerable::BadLocalPart => "bad_local_part",
            Unanswerable::DomainLiteral => "domain_literal",
            Unanswerable::BadDomain => "bad_domain",
        }
    }
}

/// Whether a reply can be sent to `local@domain`: the address and its local
/// part within RFC 5321's lengths (254, 64), the local part an ASCII
/// dot-atom, the domain a host name of at least two labels (letters,
/// digits, inner hyphens, 63 characters each). Quoted local parts, address
/// literals (`joe@[127.0.0.1]`) and non-ASCII addresses are refused: a
/// contest robot answers ordinary addresses only.
pub fn check_answerable(address: &str) -> Result<(), Unanswerable> {
    let (local, domain) = address.rsplit_once('@').ok_or(Unanswerable::BadLocalPart)?;
    let n_local = local.chars().count();
    if n_local > 64 {
        return Err(Unanswerable::LocalPartTooLong(n_local));
    }
    let n = address.chars().count();
    if n > 254 {
        return Err(Unanswerable::AddressTooLong(n));
    }
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    if local.is_empty()
        || local
            .split('.')
            .any(|w| w.is_empty() || !w.chars().all(atext))
    {
        return Err(Unanswerable::BadLocalPart);
    }
    if domain.starts_with('[') {
        return Err(Unanswerable::DomainLiteral);
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 || !labels.iter().all(|l| label_ok(l)) {
        return Err(Unanswerable::BadDomain);
    }
    // The mail builder's own grammar (lettre, through the `email_address`
    // crate), so that no address passes here that a reply cannot go to.
    if address.parse::<lettre::Address>().is_err() {
        return Err(Unanswerable::BadLocalPart);
    }
    Ok(())
}
