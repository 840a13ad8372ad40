//! The public identifiers grantor hands out and the seams carry, none of them a secret: a
//! client's id, a user's id, an access token's `jti`, a token family's id and the thumbprint of
//! the key a token is bound to. A leaf: everything else may name them, they name nothing above.

use std::fmt;

use smol_str::SmolStr;

use crate::error::ClientError;

/// A client identifier (RFC 6749 §2.2). Not a secret. Held inline up to 23 bytes, so clones
/// copy it rather than share a reference count between threads.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(SmolStr);

impl ClientId {
    /// A client id; RFC 6749 §A.1 allows printable ASCII (`%x20-7E`), and grantor also refuses
    /// the empty id.
    pub fn new(id: impl AsRef<str>) -> Result<Self, ClientError> {
        let id = id.as_ref();
        if id.is_empty() || !id.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
            return Err(ClientError::InvalidClientId);
        }
        Ok(Self(SmolStr::new(id)))
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientId({:?})", &*self.0)
    }
}

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
    /// A user account's stable identifier (the `sub` of its tokens, but for pairwise clients'
    /// ID tokens and userinfo). Not a secret. Held inline
    /// up to 23 bytes, as [`ClientId`](crate::client::ClientId) is.
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

/// The identifier of a family of codes and tokens descending from one authorization, which
/// grantor mints: the time in milliseconds (48 bits, as in a UUIDv7) and 80 random bits, so that
/// later families sort later and a database index on family ids grows at its end. Not a secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FamilyId(u128);

impl FamilyId {
    /// The family of a grant verified from a self-contained (JWT) access token alone, which
    /// does not name its family: grantor never mints this id.
    pub const UNKNOWN: FamilyId = FamilyId(0);

    /// A family id from its 16 bytes (for instance read back from a database).
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(u128::from_be_bytes(bytes))
    }

    /// The 16 bytes of the id, as a database keeps them.
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// The id as one number.
    pub const fn as_u128(self) -> u128 {
        self.0
    }
}

impl fmt::Debug for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FamilyId({:032x})", self.0)
    }
}
