//! The control path of [`UmadSource`]: PMA and SMP Sets and Gets and SA
//! queries on demand, addressed by the LIDs the last sweep found; and its
//! [`crate::source::Source`] impl, whose `control` is that path.

use std::collections::HashMap;
use std::time::Instant;

use super::super::{pma, req, sa, transport::TxError};
use super::{ControlError, PmaControl, UmadSource};
use crate::mad::pma::{attr as pma_attr, PortSamplesControl};
use crate::model::Snapshot;
use crate::types::Guid;

impl UmadSource {
    /// Applies a PMA change on (node, port) through the node's PMA (LID from the last
    /// snapshot).
    pub fn pma_control(
        &mut self,
        node: Guid,
        port: u8,
        op: &PmaControl,
    ) -> Result<(), ControlError> {
        let lid = self
            .addresses
            .pma_lid(node, port)
            .ok_or(ControlError::UnknownNode(node))?;
        let request = match op {
            PmaControl::ClearCounters { mask } => pma::counter_reset(lid, port, *mask),
            PmaControl::SamplesControl(c) => {
                let mut c = (**c).clone();
                c.port_select = port;
                let mut data = [0u8; PortSamplesControl::LEN];
                let _ = c.encode(&mut data);
                req::pma(req::SET, pma_attr::PORT_SAMPLES_CONTROL, 0, lid, &data)
            }
        };
        self.tr.call(request)?;
        Ok(())
    }

    /// A PathRecord from the SA, on demand.
    pub fn path_record(
        &mut self,
        slid: u16,
        dlid: u16,
    ) -> Result<Option<crate::mad::sa::PathRecord>, TxError> {
        let sm = self.sm_lid();
        sa::path_record(&mut self.tr, sm, slid, dlid)
    }

    /// The master SM's LID as the last sweep saw it, else the port's SMLID.
    fn sm_lid(&self) -> u16 {
        self.addresses.master_sm.unwrap_or(self.port.sm_lid)
    }
}

impl UmadSource {
    /// The LID of the PMA that answers for `port` of `node` ([`Snapshot::pma_lid`]).
    fn pma_lid(&self, node: Guid, port: u8) -> Result<u16, crate::source::SourceError> {
        self.addresses
            .pma_lid(node, port)
            .ok_or(crate::source::SourceError::NoSuchNode(node))
    }

    fn pma_call(
        &mut self,
        request: super::super::transport::Request,
    ) -> Result<Vec<u8>, crate::source::SourceError> {
        self.tr.call(request).map_err(|e| match e {
            TxError::Status(s) => crate::source::SourceError::Unsupported(format!(
                "PMA answered status {s:#06x} ({})",
                crate::mad::header::status_text(s)
            )),
            e => crate::source::SourceError::Fabric(format!("PMA: {e}")),
        })
    }

    /// One PMA exchange of attribute `T` with the PMA at `lid`: `value` is the
    /// Set data or the PortSelect-carrying Get template; the answer is decoded.
    fn pma_exchange<T: crate::mad::Attribute>(
        &mut self,
        method: u8,
        lid: u16,
        value: &T,
    ) -> Result<T, crate::source::SourceError> {
        use crate::source::SourceError;
        let mut data = vec![0u8; T::LEN];
        value
            .encode(&mut data)
            .map_err(|e| SourceError::Invalid(e.to_string()))?;
        let mad = self.pma_call(req::pma(method, T::ATTRIBUTE_ID, 0, lid, &data))?;
        T::decode(req::pma_data(&mad)).map_err(|e| SourceError::Fabric(e.to_string()))
    }
}

/// The LIDs the control path addresses, taken from each sweep's snapshot.
#[derive(Debug, Default)]
pub(super) struct Addresses {
    /// Per node: the PMA LID of each port number (index) and, last, of
    /// PortSelect 255 (all ports); 0 where there is none.
    pma: HashMap<Guid, Vec<u16>>,
    /// The master SM's LID.
    master_sm: Option<u16>,
}

impl Addresses {
    pub(super) fn of(s: &Snapshot) -> Self {
        let lid = |g: Guid, p: u8| s.pma_lid(g, crate::types::PortNum(p)).map_or(0, |l| l.0);
        let pma = s
            .nodes
            .iter()
            .map(|n| {
                let g = n.info.node_guid;
                let mut lids: Vec<u16> = (0..=n.info.num_ports).map(|p| lid(g, p)).collect();
                lids.push(lid(g, 255));
                (g, lids)
            })
            .collect();
        Addresses {
            pma,
            master_sm: s.master_sm().map(|m| m.lid.0),
        }
    }

    fn pma_lid(&self, node: Guid, port: u8) -> Option<u16> {
        let lids = self.pma.get(&node)?;
        let i = if port == 255 {
            lids.len() - 1
        } else {
            usize::from(port).min(lids.len() - 1)
        };
        lids.get(i).copied().filter(|&l| l != 0)
    }
}

impl crate::source::Source for UmadSource {
    fn sweep(&mut self) -> Result<Snapshot, crate::source::SourceError> {
        Ok(UmadSource::sweep(self)?)
    }

    /// After a quick first sweep, at once: the sweep that completes it
    /// should not wait a whole interval.
    fn wake_at(&self) -> Option<Instant> {
        self.completing().then(Instant::now)
    }

    fn wake(&mut self) -> bool {
        self.completing()
    }

    fn demand(&self) -> Option<std::sync::Arc<crate::source::demand::Demand>> {
        Some(std::sync::Arc::clone(&self.demand))
    }

    fn control(
        &mut self,
        op: crate::source::ControlOp,
    ) -> Result<crate::source::ControlReply, crate::source::SourceError> {
        use crate::mad::pma::PortCounters;
        use crate::source::{ControlOp, ControlReply, SourceError};
        match op {
            ControlOp::GetPortCounters { node, port } => {
                let lid = self.pma_lid(node, port.0)?;
                let template = PortCounters {
                    port_select: port.0,
                    ..PortCounters::default()
                };
                let pc = self.pma_exchange(req::GET, lid, &template)?;
                Ok(ControlReply::PortCounters(pc))
            }
            ControlOp::SetPortCounters {
                node,
                port,
                counter_select,
                counter_select2,
                values,
            } => {
                let lid = self.pma_lid(node, port.0)?;
                let pc = PortCounters {
                    port_select: port.0,
                    counter_select,
                    counter_select2,
                    ..values
                };
                let pc = self.pma_exchange(req::SET, lid, &pc)?;
                Ok(ControlReply::PortCounters(pc))
            }
            ControlOp::SetPortSamplesControl { node, control } => {
                let lid = self.pma_lid(node, control.port_select)?;
                let c = self.pma_exchange(req::SET, lid, &control)?;
                Ok(ControlReply::PortSamplesControl(c))
            }
            ControlOp::SetPortInfo { node, port, info } => {
                let path = self
                    .last_disc
                    .as_ref()
                    .and_then(|d| d.nodes.get(&node))
                    .map(|n| n.path.clone())
                    .ok_or(SourceError::NoSuchNode(node))?;
                let mut data = vec![0u8; crate::mad::smp::PortInfo::LEN];
                info.encode(&mut data)
                    .map_err(|e| SourceError::Invalid(e.to_string()))?;
                let request = req::dr_set(
                    crate::mad::smp::attr::PORT_INFO,
                    u32::from(port.0),
                    &path,
                    self.opts.m_key,
                    &data,
                );
                let mad = self.tr.call(request).map_err(|e| match e {
                    TxError::Status(s) => SourceError::Unsupported(format!(
                        "SMA answered status {s:#06x} ({})",
                        crate::mad::header::status_text(s)
                    )),
                    e => SourceError::Fabric(format!("Set(PortInfo): {e}")),
                })?;
                let answer = crate::mad::smp::PortInfo::decode(req::smp_data(&mad))
                    .map_err(|e| SourceError::Fabric(e.to_string()))?;
                Ok(ControlReply::PortInfo(Box::new(answer)))
            }
            ControlOp::SimLinkFlap { .. } | ControlOp::SimErrorBurst { .. } => Err(
                SourceError::Unsupported("simulator faults need --source sim".into()),
            ),
            ControlOp::SaPathRecords {
                template,
                comp_mask,
            } => {
                let sm = self.sm_lid();
                match sa::path_records(&mut self.tr, sm, &template, comp_mask) {
                    Ok(t) if t.cut => Err(self.cut_answer(sm, "PathRecord", t.records.len())),
                    r => sa_answer(sm, r.map(|t| t.records)),
                }
            }
            ControlOp::SaMultiPathRecords { record, comp_mask } => {
                let sm = self.sm_lid();
                let mut buf = vec![0u8; record.len()];
                record
                    .encode(&mut buf)
                    .map_err(|e| SourceError::Invalid(e.to_string()))?;
                match sa::multi_path_records(&mut self.tr, sm, &buf, comp_mask) {
                    // The caller asks per pair.
                    Ok(m) if m.cut => Err(self.cut_answer(sm, "MultiPathRecord", m.paths.len())),
                    r => sa_answer(sm, r.map(|m| m.paths)),
                }
            }
        }
    }
}

/// An SA query's records as a control reply; ERR_NO_RECORDS is none.
fn sa_answer(
    sm: u16,
    r: Result<Vec<crate::mad::sa::PathRecord>, TxError>,
) -> Result<crate::source::ControlReply, crate::source::SourceError> {
    use crate::source::{ControlReply, SourceError};
    match r {
        Ok(r) => Ok(ControlReply::PathRecords(r)),
        // ERR_NO_RECORDS: no path matches.
        Err(TxError::Status(0x0400)) => Ok(ControlReply::PathRecords(Vec::new())),
        Err(TxError::Status(st)) => Err(SourceError::Fabric(format!(
            "SA (LID {sm}) answered status {st:#06x} ({})",
            crate::mad::header::status_text(st)
        ))),
        Err(e) => Err(SourceError::Fabric(format!("SA (LID {sm}): {e}"))),
    }
}
