//! CloudWatch demand history in memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::duration::Span;
use crate::forecast::DemandSeries;
use crate::ids::ScalableTargetId;
use crate::metrics_port::{window, AlarmView, DemandHistory, DemandQuery, Workload};
use crate::ports::{ErrorClass, FailureKind, PortError};

/// In-memory demand for tests and `headroom explain`; counts its calls.
#[derive(Debug, Default)]
pub struct MemoryDemand {
    series: Mutex<BTreeMap<ScalableTargetId, DemandSeries>>,
    /// Workload measurements per target, each answered for the windows it overlaps.
    workloads: Mutex<BTreeMap<ScalableTargetId, Vec<Workload>>>,
    alarms: Mutex<BTreeMap<String, AlarmView>>,
    pub calls: AtomicUsize,
    pub workload_calls: AtomicUsize,
    /// Every demand query asked, in order (which metric each target was read by).
    pub queries: Mutex<Vec<DemandQuery>>,
    /// The `[from, to)` of every demand call, in order.
    pub windows: Mutex<Vec<(DateTime<Utc>, DateTime<Utc>)>>,
    /// While set, every demand call fails as AWS would, with this class and error code.
    pub failing: Mutex<Option<(ErrorClass, String)>>,
}

impl MemoryDemand {
    pub fn with(self, id: ScalableTargetId, series: DemandSeries) -> Self {
        self.series
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, series);
        self
    }

    /// A measurement of `id` over `w.from..w.to`: a later call whose window lies within it
    /// answers it (so a test states what each window measured).
    pub fn with_workload(self, id: ScalableTargetId, w: Workload) -> Self {
        lock(&self.workloads).entry(id).or_default().push(w);
        self
    }

    /// Demand calls fail from now on, as AWS answering `code` (`None`: they succeed again).
    pub fn fail_with(&self, failure: Option<(ErrorClass, &str)>) {
        *lock(&self.failing) = failure.map(|(class, code)| (class, code.to_owned()));
    }

    pub fn with_alarm(self, alarm: AlarmView) -> Self {
        lock(&self.alarms).insert(alarm.name.clone(), alarm);
        self
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl DemandHistory for MemoryDemand {
    async fn demand(
        &self,
        targets: &[DemandQuery],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        lock(&self.queries).extend_from_slice(targets);
        lock(&self.windows).push((from, to));
        if let Some((class, code)) = lock(&self.failing).clone() {
            return Err(
                PortError::new("read the demand history", class, code.clone()).with_answer(
                    FailureKind::Aws,
                    Some(code),
                    "as the test asked",
                ),
            );
        }
        let all = self
            .series
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(targets
            .iter()
            .map(|q| match all.get(&q.target) {
                Some(s) => window(&s.coarsen(period.as_secs()), from, to),
                None => DemandSeries::empty(from, period.as_secs()),
            })
            .collect())
    }

    async fn workload(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Workload>, PortError> {
        self.workload_calls.fetch_add(1, Ordering::Relaxed);
        let all = lock(&self.workloads);
        Ok(targets
            .iter()
            .map(|id| {
                all.get(id)
                    .and_then(|ws| ws.iter().find(|w| w.from <= from && to <= w.to))
                    .map(|w| Workload {
                        from,
                        to,
                        ..w.clone()
                    })
                    .unwrap_or_else(|| Workload::empty(from, to))
            })
            .collect())
    }

    async fn alarms(&self, names: &[String]) -> Result<Vec<AlarmView>, PortError> {
        let all = lock(&self.alarms);
        Ok(names.iter().filter_map(|n| all.get(n).cloned()).collect())
    }
}
