//! The node contexts' resolver (issue 39): the engine asks it for every
//! request naming a context other than "" that VACM allows (access is
//! decided from the name first: a refused request derives nothing and
//! asks the source for nothing). It derives the node's view now
//! from the view the default context would answer from (the current
//! snapshot and agent state: `mibs::modules::node_context::view`), and answers it
//! with the node contexts' own object set. It keeps nothing per node.

use std::sync::Arc;

use ib::source::demand::Demand;
use mibs::{Change, View};
use snmp::context::{ContextView, Contexts};
use snmp::dispatch::Dispatcher;
use snmp::pdu::Pdu;

/// The default context's view, as requests read it.
pub type ViewFn = Arc<dyn Fn() -> View + Send + Sync>;

/// Every node of the current snapshot as a context.
pub struct NodeContexts {
    /// The default context's view, which each node's derives from.
    view: ViewFn,
    /// The source's (where it reads other nodes' detail attributes on
    /// request): told which nodes are polled.
    demand: Option<Arc<Demand>>,
    dispatcher: Arc<Dispatcher<View, Change>>,
}

impl NodeContexts {
    /// Contexts answered by `dispatcher` (the node contexts' objects),
    /// resolved from `view`.
    pub fn new(
        dispatcher: Dispatcher<View, Change>,
        view: ViewFn,
        demand: Option<Arc<Demand>>,
    ) -> Self {
        NodeContexts {
            view,
            demand,
            dispatcher: Arc::new(dispatcher),
        }
    }

    /// The node contexts' object set.
    pub fn dispatcher(&self) -> &Dispatcher<View, Change> {
        &self.dispatcher
    }

    fn base(&self) -> View {
        (self.view)()
    }

    /// A node context is polled: its nodes' detail attributes (error
    /// details, flow control, per-VL counters) are read from the next
    /// sweep on, as long as it is polled. Its counters that need them are
    /// absent until then, never a 0 that was not read.
    fn asked(&self, view: &View) {
        let (Some(demand), Some(ctx)) = (&self.demand, view.derived.node()) else {
            return;
        };
        for n in ctx.target.nodes() {
            if let Some(node) = view.snapshot.node(*n) {
                demand.ask(node.info.node_guid, ib::model::counters::detail::ALL);
            }
        }
    }
}

impl NodeContexts {
    /// The context `name` with the rows of the ifIndexes `only` (None:
    /// all of them).
    fn resolve_reading(
        &self,
        name: &[u8],
        only: Option<&[u32]>,
    ) -> Option<ContextView<View, Change>> {
        let view = mibs::modules::node_context::view_reading(&self.base(), name, only)?;
        self.asked(&view);
        Some(ContextView {
            view,
            dispatcher: Arc::clone(&self.dispatcher),
        })
    }
}

impl Contexts<View, Change> for NodeContexts {
    fn resolve(&self, name: &[u8]) -> Option<ContextView<View, Change>> {
        self.resolve_reading(name, None)
    }

    /// A GetRequest that reads some ports' rows alone derives only those
    /// (a poller asking one counter of each of many nodes in turn derives
    /// one row each: `mibs::modules::node_context::rows_read`).
    fn resolve_for(&self, name: &[u8], pdu: &Pdu) -> Option<ContextView<View, Change>> {
        let only = match pdu {
            Pdu::GetRequest(b) => {
                mibs::modules::node_context::rows_read(b.varbinds.iter().map(|v| v.oid.as_slice()))
            }
            _ => None,
        };
        self.resolve_reading(name, only.as_deref())
    }

    fn exists(&self, name: &[u8]) -> bool {
        mibs::modules::node_context::exists(&self.base(), name)
    }

    fn next_name(&self, after: &[u8]) -> Option<Vec<u8>> {
        mibs::modules::node_context::next_name(&self.base(), after)
    }
}
