//! What the admin command prints: one tab-separated line per client or consent, and times in
//! RFC 3339.

use crate::client::{Client, ClientId, GrantType};
use crate::clock::UnixTime;
use crate::store::Consent;

/// `user consents`: a line per client, tab-separated.
pub(super) fn print_consents(consents: &[(ClientId, Consent)]) {
    for (client, consent) in consents {
        say!(
            "{}\t{}\t{}",
            client.as_str(),
            consent.scope.as_str(),
            consent.audience.as_str()
        );
    }
}

/// `at` as `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC), from the days since 1970 by the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
pub(super) fn utc(at: UnixTime) -> String {
    let secs = at.as_secs();
    let (days, time) = (secs / 86_400, secs % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3_600,
        time % 3_600 / 60,
        time % 60
    )
}

/// One line of `client list`, tab-separated.
pub(super) fn describe(client: &Client, last_used: Option<UnixTime>) -> String {
    let kind = if client.is_public() {
        "public"
    } else {
        "confidential"
    };
    let grants: Vec<&str> = GrantType::ALL
        .into_iter()
        .filter(|grant| client.allows(*grant))
        .map(GrantType::as_str)
        .collect();
    format!(
        "{}\t{kind}\t{}\t{}\t{}\t{}\t{}\t{}",
        client.id().as_str(),
        client.name(),
        grants.join(" "),
        client.scopes().as_str(),
        client.redirect_uris().join(" "),
        client.tier().as_str(),
        last_used.map_or_else(|| "-".to_owned(), utc),
    )
}
