//! CloudWatch demand history in memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::duration::Span;
use crate::forecast::DemandSeries;
use crate::ids::ScalableTargetId;
use crate::metrics_port::{window, DemandHistory};
use crate::ports::PortError;

/// In-memory demand for tests and `headroom explain`; counts its calls.
#[derive(Debug, Default)]
pub struct MemoryDemand {
    series: Mutex<BTreeMap<ScalableTargetId, DemandSeries>>,
    pub calls: AtomicUsize,
}

impl MemoryDemand {
    pub fn with(self, id: ScalableTargetId, series: DemandSeries) -> Self {
        self.series
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, series);
        self
    }
}

impl DemandHistory for MemoryDemand {
    async fn demand(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let all = self
            .series
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(targets
            .iter()
            .map(|id| match all.get(id) {
                Some(s) => window(&s.coarsen(period.as_secs()), from, to),
                None => DemandSeries::empty(from, period.as_secs()),
            })
            .collect())
    }
}
