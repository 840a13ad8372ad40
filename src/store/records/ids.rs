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
