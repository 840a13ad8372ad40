//! The public identifiers that cross the seams and are not secrets: a user's id and an access
//! token's `jti`.

use std::fmt;

use smol_str::SmolStr;

/// Defines a public identifier that is not a secret: text held inline up to 23 bytes, so making
/// and cloning one copies bytes instead of allocating or sharing a reference count between
/// threads; `new`, `as_str`, `Display`, and a `Debug` that shows the text.
macro_rules! text_id {
    ($(#[$meta:meta])* $name:ident, $new_doc:literal) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(SmolStr);

        impl $name {
            #[doc = $new_doc]
            pub fn new(id: impl AsRef<str>) -> Self {
                Self(SmolStr::new(id))
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({:?})"), self.as_str())
            }
        }
    };
}

text_id!(
    /// A user account's stable identifier (the `sub` of its tokens). Not a secret. Held inline
    /// up to 23 bytes, as [`ClientId`](crate::ClientId) is.
    UserId,
    "An id as the host's user store knows it."
);

text_id!(
    /// An access token's `jti`: the identifier the token response and introspection give for it
    /// (RFC 7662 §2.2). Unique, and neither the token nor anything the token can be recovered
    /// from, so it may be logged. Held inline up to 23 bytes (grantor's are 22), so making and
    /// cloning one allocates nothing.
    Jti,
    "A `jti` as the host's token issuer made it."
);

/// The SHA-256 JWK thumbprint (RFC 7638) of the key a token is bound to: `cnf.jkt` of a DPoP
/// sender-constrained token (RFC 9449 §6). The hash of a public key, so not a secret; its text
/// is the thumbprint in unpadded base64url (43 characters).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JwkThumbprint([u8; 32]);

impl JwkThumbprint {
    /// A thumbprint from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A thumbprint from its base64url text (as `cnf.jkt` writes it); `None` unless it is
    /// exactly 32 bytes in unpadded base64url.
    pub fn parse(text: &str) -> Option<Self> {
        use base64::Engine as _;
        let mut bytes = [0u8; 32];
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        match engine.decode_slice(text.as_bytes(), &mut bytes) {
            Ok(32) if text.len() == 43 => Some(Self(bytes)),
            _ => None,
        }
    }
}

impl fmt::Display for JwkThumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; crate::secret::base64url_len(32)];
        f.write_str(crate::secret::base64url_into(&self.0, &mut text))
    }
}

impl fmt::Debug for JwkThumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JwkThumbprint({self})")
    }
}
