//! Rings in etcd: the stored state and its decoder ([`RingState`]), the router it builds
//! ([`RingRouter`]), the store that changes it by compare-and-swap ([`RingStore`]) and the
//! watcher that serves it ([`RingWatcher`]). The [crate docs](crate#rings-in-etcd) describe the
//! schema and the consistency model.

mod change;
mod error;
mod router;
mod state;
mod store;
mod watcher;

pub use error::{DecodeError, RingError};
pub use router::RingRouter;
pub use state::{
    ChangeId, Member, MemberState, Records, RingState, CHANGE_LOG, FORMAT, MAX_CHANGE_ID_BYTES, MAX_LABELS,
    MAX_LABEL_BYTES, MAX_NAME_BYTES,
};
pub use store::{Committed, RingStore};
pub use watcher::{EventHandler, RingEvent, RingWatcher, WatchConfig, WatchStatus};
