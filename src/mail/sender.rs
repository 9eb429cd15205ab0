//! Who a sender is for the caps that count senders: the address folded to
//! one key. Only the key; the caps are [`super::process`]'s and the store's.

/// The key the per-sender cap counts: the address case-folded, without a
/// `+tag` (`Joe+x@Lords.Example` counts as `joe@lords.example`).
pub fn sender_key(address: &str) -> String {
    let low = address.to_ascii_lowercase();
    match low.rsplit_once('@') {
        Some((local, domain)) => {
            let user = local
                .split('+')
                .next()
                .filter(|u| !u.is_empty())
                .unwrap_or(local);
            format!("{user}@{domain}")
        }
        None => low,
    }
}
