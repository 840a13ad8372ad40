//! The `grantor` command's words: its subcommands and their arguments, as clap reads them.

use clap::{Args, Subcommand, ValueEnum};

use crate::client::GrantType;

#[derive(Subcommand)]
pub(super) enum Command {
    /// Registers, lists, rotates the secret of, or removes clients.
    #[command(subcommand)]
    Client(ClientCommand),
    /// Adds users, resets their passwords (read from standard input) or sets their claims;
    /// ends their sessions; lists and forgets their approvals.
    #[command(subcommand)]
    User(UserCommand),
    /// Lists and rotates the JWT signing keys (ID tokens, JWT access tokens), and re-seals key
    /// material under a new key-encryption key.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Deletes expired codes, tokens, sessions and counters, and revoked families.
    Purge,
    /// Applies the schema's pending migrations (every command does first): run it once ahead
    /// of a rolling deploy whose nodes open the store without migrating.
    Migrate,
}

#[derive(Subcommand)]
pub(super) enum ClientCommand {
    /// Registers a client; a confidential one's generated secret is printed once.
    Add(AddClient),
    /// Lists every client with its tier and last use; never a secret.
    ///
    /// A tab-separated line each: id, kind (confidential or public), name, grant types, scopes, redirect URIs, tier (administered, self-registered or
    /// metadata-document) and last use (a self-registered client's last authorization or token
    /// request, in UTC, as recorded: at most hourly per node; `-` when none is recorded or the
    /// client is administered).
    List,
    /// Gives a confidential client a new generated secret (printed once); the old one keeps
    /// working for `--overlap` seconds.
    RotateSecret {
        /// The client's id.
        client_id: String,
        /// How long the old secret keeps working, in seconds.
        #[arg(long, default_value_t = 86_400)]
        overlap: u64,
    },
    /// Removes a client.
    Remove {
        /// The client's id.
        client_id: String,
    },
    /// Deletes the self-registered clients unused for longer than the registration policy's
    /// idle lifetime (mounted in a host's binary: the server's; alone: `--idle-for`), with
    /// their tokens; prints how many went.
    ForgetIdle {
        /// How long a self-registered client may go unused, in seconds, when no server says
        /// (the standalone command).
        #[arg(long, default_value_t = 30 * 86_400)]
        idle_for: u64,
    },
}

#[derive(Args)]
pub(super) struct AddClient {
    /// The client's id.
    pub(super) client_id: String,
    /// Its name, shown on the approval page (default: the id).
    #[arg(long)]
    pub(super) name: Option<String>,
    /// A grant type it may use (repeat for several).
    #[arg(long = "grant", value_enum, required = true)]
    pub(super) grants: Vec<Grant>,
    /// A redirect URI (repeat for several; needed for the code and implicit grants).
    #[arg(long = "redirect-uri")]
    pub(super) redirect_uris: Vec<String>,
    /// Accept redirect URIs that are `http` on a host other than a loopback one (codes sent
    /// to them can be read on the way): only for a network you know.
    #[arg(long)]
    pub(super) allow_insecure_redirect_uris: bool,
    /// The scopes it may ask for, space-separated.
    #[arg(long, default_value = "")]
    pub(super) scope: String,
    /// A public client (no secret: an app on a user's device; PKCE is required).
    #[arg(long)]
    pub(super) public: bool,
    /// Skip the approval page: signing in is approval (first-party clients).
    #[arg(long)]
    pub(super) no_approval: bool,
    /// The client sends its secret in the token request's body (`client_secret_post`);
    /// HTTP Basic is then refused to it.
    #[arg(long)]
    pub(super) secret_in_body: bool,
    /// How its ID tokens are signed (OpenID Connect; default RS256).
    #[arg(long, value_enum)]
    pub(super) id_token_alg: Option<IdTokenAlg>,
    /// Where a logout may send the browser back (repeat for several; OpenID Connect
    /// RP-Initiated Logout).
    #[arg(long = "post-logout-redirect-uri")]
    pub(super) post_logout_redirect_uris: Vec<String>,
    /// Where a logout token is posted when a session it was issued tokens in ends (OpenID
    /// Connect Back-Channel Logout).
    #[arg(long)]
    pub(super) backchannel_logout_uri: Option<String>,
}

/// An ID-token signing algorithm.
#[derive(Clone, Copy, ValueEnum)]
pub(super) enum IdTokenAlg {
    #[value(name = "RS256")]
    Rs256,
    #[value(name = "ES256")]
    Es256,
    #[value(name = "EdDSA")]
    EdDsa,
}

impl From<IdTokenAlg> for crate::settings::SigningAlgorithm {
    fn from(alg: IdTokenAlg) -> Self {
        match alg {
            IdTokenAlg::Rs256 => Self::RS256,
            IdTokenAlg::Es256 => Self::ES256,
            IdTokenAlg::EdDsa => Self::EdDSA,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Grant {
    #[value(name = "authorization_code")]
    AuthorizationCode,
    #[value(name = "implicit")]
    Implicit,
    #[value(name = "password")]
    Password,
    #[value(name = "refresh_token")]
    RefreshToken,
    #[value(name = "client_credentials")]
    ClientCredentials,
    #[value(name = "device_code")]
    DeviceCode,
    #[value(name = "token_exchange")]
    TokenExchange,
    #[value(name = "jwt_bearer")]
    JwtBearer,
}

impl From<Grant> for GrantType {
    fn from(grant: Grant) -> Self {
        match grant {
            Grant::AuthorizationCode => GrantType::AuthorizationCode,
            Grant::Implicit => GrantType::Implicit,
            Grant::Password => GrantType::Password,
            Grant::RefreshToken => GrantType::RefreshToken,
            Grant::ClientCredentials => GrantType::ClientCredentials,
            Grant::DeviceCode => GrantType::DeviceCode,
            Grant::TokenExchange => GrantType::TokenExchange,
            Grant::JwtBearer => GrantType::JwtBearer,
        }
    }
}

/// The key-encryption key a command reads (never from the command line, where `ps` shows it).
#[derive(Args)]
pub(super) struct KeyEncryption {
    /// A file holding the key-encryption key the server encrypts its keys at rest with (32
    /// bytes in standard base64, as `openssl rand -base64 32` prints them); without it, the
    /// environment variable GRANTOR_KEY_ENCRYPTION_KEY (the demo server's); without either,
    /// the keys are in the clear.
    #[arg(long, value_name = "PATH")]
    pub(super) key_file: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
pub(super) enum KeysCommand {
    /// Lists the JWT signing keys: kid, algorithm, created, state; never key material.
    ///
    /// A tab-separated line each: kid, algorithm, created (when
    /// `keys rotate` made it, or for a key of the schedule the start of its period, in UTC)
    /// and state: `current` (signs), `next` (published ahead of its period), `retiring`
    /// (published so that what it signed verifies), `retired` (kept, no longer published).
    /// Encrypted keys need the key-encryption key (`--key-file` or
    /// GRANTOR_KEY_ENCRYPTION_KEY; mounted in the host's binary, the server's).
    List(KeyEncryption),
    /// Makes a fresh signing key current now for each algorithm in use (a key may have leaked).
    ///
    /// Ahead of the schedule, a fresh key per algorithm signs in place of the current one, and in place of
    /// the next period's, published already. The keys replaced stay published as long as a
    /// scheduled rotation keeps them, so tokens they signed still verify until they expire.
    /// Each node of the server signs with the new key within a minute. At most 8 early
    /// rotations per rotation period. Prints the new current keys as `keys list` does; refused
    /// (status 1) when no signing key is in use yet.
    Rotate(KeyEncryption),
    /// Re-seals every piece of key material under a new key-encryption key.
    ///
    /// Material sealed
    /// under the old key is opened and sealed again, material in the clear (a database whose
    /// server said `keys_in_clear`) is sealed, material sealed under the new key already is
    /// left (so an interrupted run can be run again). Nothing changes unless every piece
    /// opens. Then start the servers with the new key; a server with the old one answers 503
    /// saying which key it needs. Stop the servers first: a key one of them makes meanwhile is
    /// sealed under the old key (run the command again after). Needs `--database`.
    ///
    /// The new key: `--new-key-file` or the environment variable
    /// GRANTOR_NEW_KEY_ENCRYPTION_KEY. The old one: `--key-file` or
    /// GRANTOR_KEY_ENCRYPTION_KEY, or none for a database in the clear.
    Reseal {
        #[command(flatten)]
        old: KeyEncryption,
        /// A file holding the new key-encryption key (32 bytes in standard base64).
        #[arg(long, value_name = "PATH")]
        new_key_file: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand)]
pub(super) enum UserCommand {
    /// Adds a user (an email address); the password is the first line of standard input.
    Add {
        /// The username: an email address, unique in any case.
        username: String,
    },
    /// Replaces a user's password with the first line of standard input.
    SetPassword {
        /// The username.
        username: String,
    },
    /// Replaces a user's OpenID Connect claims (OIDC Core §5.1), released to clients by the
    /// scopes they are granted; prints what is kept (names grantor sets itself, such as `sub`,
    /// are dropped).
    SetClaims {
        /// The username.
        username: String,
        /// A JSON object of at most 8 KiB: `{"name": "Alice", "email": "alice@example.com",
        /// "email_verified": true}`; `{}` clears them.
        claims: String,
    },
    /// Ends every single sign-on session of a user (a lost device, a taken account).
    ///
    /// Their browsers must sign in again. Mounted in the host's binary, as the server's logout
    /// ends one: each client issued tokens in them that registered a back-channel logout URI
    /// is sent a logout token and loses the refresh tokens of the session. Alone, without
    /// the host's server, the sessions end in the store and nothing else happens: no logout
    /// token is sent (it needs the server's issuer, signing keys and outbound), no token is
    /// revoked. Prints how many sessions ended.
    EndSessions {
        /// The username.
        username: String,
    },
    /// Lists the approvals a user gave clients that are remembered now.
    ///
    /// A tab-separated line each: client id, scope, resources (space-separated; empty: the
    /// server's default).
    Consents {
        /// The username.
        username: String,
    },
    /// Forgets a user's remembered approval of a client.
    ///
    /// The client's next authorization request asks the user again. Tokens already issued stay valid (`client remove` or
    /// revocation ends them).
    ForgetConsent {
        /// The username.
        username: String,
        /// The client's id.
        client_id: String,
    },
}
