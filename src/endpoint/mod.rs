//! The wire: parsing requests into typed values and rendering outcomes into responses. Pure and
//! synchronous except where an endpoint hands over to the grant logic.

pub(crate) mod basic;
pub(crate) mod form;
pub(crate) mod render;
pub(crate) mod token;
