//! The records' own rules: ids show their text, and digests never show in `Debug`.

use super::*;

#[test]
fn text_ids_show_their_text_and_compare_by_it() {
    let jti = Jti::new("b8nQ1vR4x2kLmP0sT7uW9y");
    assert_eq!(jti.as_str(), "b8nQ1vR4x2kLmP0sT7uW9y");
    assert_eq!(jti.to_string(), "b8nQ1vR4x2kLmP0sT7uW9y");
    assert_eq!(format!("{jti:?}"), r#"Jti("b8nQ1vR4x2kLmP0sT7uW9y")"#);
    assert_eq!(jti, Jti::new(String::from("b8nQ1vR4x2kLmP0sT7uW9y")));
    let long = "a user id longer than twenty-three bytes";
    assert_eq!(UserId::new(long).as_str(), long);
    assert_eq!(format!("{:?}", UserId::new("u1")), r#"UserId("u1")"#);
    assert!(UserId::new("a") < UserId::new("b"));
}

#[test]
fn minted_token_records_show_no_digest_in_debug() {
    use base64::Engine as _;
    let (access, refresh) = (SecretDigest::of("access"), SecretDigest::of("refresh"));
    let authorization = Authorization::new(
        crate::client::ClientId::new("c").unwrap(),
        None,
        Scope::parse("a").unwrap(),
    );
    let at = UnixTime::from_secs(1);
    let record = NewTokens::new(
        Family::New(FamilyId::from_bytes([7; 16])),
        authorization,
        at,
        access,
        Jti::new("j"),
        at,
    )
    .with_refresh_token(NewRefreshToken::new(refresh, at));
    let shown = format!("{record:?}");
    for digest in [access, refresh] {
        let bytes = digest.as_bytes();
        for encoded in [
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
            format!("{bytes:?}"),
        ] {
            assert!(!shown.contains(&encoded), "{shown}");
        }
    }
    assert_eq!(
        shown.matches("SecretDigest(<redacted>)").count(),
        2,
        "{shown}"
    );
}
