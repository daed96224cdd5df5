//! The node contexts' resolver (issue 39): the engine asks it for every
//! request naming a context other than "". It derives the node's view now
//! from the view the default context would answer from (the current
//! snapshot and agent state: `mibs::node_context::view`), and answers it
//! with the node contexts' own object set. It keeps nothing per node.

use std::sync::{Arc, OnceLock};

use mibs::{Change, View};
use snmp::context::{ContextView, Contexts};
use snmp::dispatch::Dispatcher;

/// The default context's view, as requests read it.
pub type ViewFn = Arc<dyn Fn() -> View + Send + Sync>;

/// Every node of the current snapshot as a context.
pub struct NodeContexts {
    /// Set once the fabric is running (the engine's objects, vacmContextTable
    /// among them, are built before it); no context resolves before.
    view: OnceLock<ViewFn>,
    dispatcher: Arc<Dispatcher<View, Change>>,
}

impl NodeContexts {
    /// Contexts answered by `dispatcher` (the node contexts' objects).
    pub fn new(dispatcher: Dispatcher<View, Change>) -> Self {
        NodeContexts {
            view: OnceLock::new(),
            dispatcher: Arc::new(dispatcher),
        }
    }

    /// Resolves from `view` from now on (called once; later calls change
    /// nothing).
    pub fn serve_from(&self, view: ViewFn) {
        let _ = self.view.set(view);
    }

    /// The node contexts' object set.
    pub fn dispatcher(&self) -> &Dispatcher<View, Change> {
        &self.dispatcher
    }

    fn base(&self) -> Option<View> {
        self.view.get().map(|v| v())
    }
}

impl Contexts<View, Change> for NodeContexts {
    fn resolve(&self, name: &[u8]) -> Option<ContextView<View, Change>> {
        let view = mibs::node_context::view(&self.base()?, name)?;
        Some(ContextView {
            view,
            dispatcher: Arc::clone(&self.dispatcher),
        })
    }

    fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
        mibs::node_context::next_name(&self.base()?, after)
    }
}
