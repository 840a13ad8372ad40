//! The guide: how to host grantor, chapter by chapter. It holds no items, only documentation,
//! and every Rust example in it runs as a doc test.
//!
//! Start with [getting started](getting_started) (the demo, a walk-through with curl, the code
//! flow in Rust), then [hosting] (a complete host in one screen, the endpoints and pages
//! mounted in one call). The builder, [`AuthorizationServerBuilder`](crate::AuthorizationServerBuilder),
//! is where every setting below is turned on; the seams a host implements are in
//! [`store`](crate::store).
//!
//! | chapter | what it covers |
//! |---|---|
//! | [getting started](getting_started) | the demo server and its seeded clients, curl, the code flow in Rust |
//! | [hosting] | a complete host, a host with its own state, mounting the endpoints and pages, the pages' look |
//! | [users] | the sign-in steps, your own users and password hashes, a second factor, your own steps, step-up |
//! | [clients] | self-registration and management, pushed requests, the device flow |
//! | [tokens] | bearer validation, audiences, JWT access tokens, DPoP, an MCP server's resource |
//! | [OpenID Connect](openid_connect) | ID tokens, userinfo, discovery, single sign-on, consent, logout |
//! | [enterprise] | token exchange, ID-JAG, the JWT-bearer grant |
//! | [stores] | choosing a store, the SQL stores, keys at rest, stores of your own and their contract |
//! | [deployment] | many nodes, rolling deploys, pgbouncer, failover, replicas, `SERIALIZABLE`, performance |
//! | [security] | whose budget a request spends |
//! | [admin] | the `grantor` command |
//! | [events] | the audit trail and tracing |
//! | [what is supported](supported) | every feature with its specification, in detail |

// The chapters link to items of every feature. A documentation build with fewer features has
// no such items to link to, so there those links are plain text rather than an error; a build
// with every feature (docs.rs's) checks them all.
#![cfg_attr(
    not(all(
        feature = "sqlite",
        feature = "postgres",
        feature = "axum",
        feature = "actix",
        feature = "tower",
        feature = "jwt",
        feature = "oidc",
        feature = "dpop",
        feature = "private-key-jwt",
        feature = "outbound",
        feature = "cli",
        feature = "test-util"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

// A chapter whose examples use a feature that is off is left out of that doc-test run (its
// examples could not compile there); `cargo test --doc --all-features` runs every chapter's.
// Documentation builds always have every chapter.

#[doc = include_str!("guide/getting_started.md")]
pub mod getting_started {}

#[cfg_attr(
    any(not(doctest), all(feature = "axum", feature = "actix", feature = "sqlite")),
    doc = include_str!("guide/hosting.md")
)]
#[cfg_attr(
    all(
        doctest,
        not(all(feature = "axum", feature = "actix", feature = "sqlite"))
    ),
    doc = "Hosting grantor (its examples need features `axum`, `actix` and `sqlite`)."
)]
pub mod hosting {}

#[doc = include_str!("guide/users.md")]
pub mod users {}

#[doc = include_str!("guide/clients.md")]
pub mod clients {}

#[cfg_attr(
    any(not(doctest), all(feature = "axum", feature = "tower", feature = "jwt", feature = "dpop")),
    doc = include_str!("guide/tokens.md")
)]
#[cfg_attr(
    all(
        doctest,
        not(all(feature = "axum", feature = "tower", feature = "jwt", feature = "dpop"))
    ),
    doc = "Tokens at the resource (its examples need features `axum`, `tower`, `jwt` and `dpop`)."
)]
pub mod tokens {}

#[cfg_attr(any(not(doctest), feature = "oidc"), doc = include_str!("guide/openid_connect.md"))]
#[cfg_attr(
    all(doctest, not(feature = "oidc")),
    doc = "OpenID Connect (its examples need feature `oidc`)."
)]
pub mod openid_connect {}

#[doc = include_str!("guide/enterprise.md")]
pub mod enterprise {}

#[cfg_attr(
    any(not(doctest), all(feature = "sqlite", feature = "test-util")),
    doc = include_str!("guide/stores.md")
)]
#[cfg_attr(
    all(doctest, not(all(feature = "sqlite", feature = "test-util"))),
    doc = "The stores (its examples need features `sqlite` and `test-util`)."
)]
pub mod stores {}

#[doc = include_str!("guide/deployment.md")]
pub mod deployment {}

#[doc = include_str!("guide/security.md")]
pub mod security {}

#[cfg_attr(any(not(doctest), feature = "cli"), doc = include_str!("guide/admin.md"))]
#[cfg_attr(
    all(doctest, not(feature = "cli")),
    doc = "The `grantor` command (its examples need feature `cli`)."
)]
pub mod admin {}

#[doc = include_str!("guide/events.md")]
pub mod events {}

#[doc = include_str!("guide/supported.md")]
pub mod supported {}
