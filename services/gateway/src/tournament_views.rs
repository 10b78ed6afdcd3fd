//! What this gateway shows of tournaments: each one's view (settings,
//! status and top standings) and the list. A view is read from the
//! matchmaker once per change the gateway hears of on the bus
//! (`tournament.<id>`, `tournaments`), however many viewers ask: the
//! matchmaker tells every change, so standings reach every gateway over
//! the bus and a thousand viewers cost one read per change, not a
//! thousand. A view nobody asked for in a minute is dropped with its
//! subscription; a view is also read again once it is a few seconds old,
//! so a notice lost on the bus delays it no longer than that.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::error::ServiceError;
use fogblast_proto::matchmaker::{GetTournamentRequest, ListTournamentsRequest, Tournament, TournamentList};
use fogblast_proto::notices::{tournament_subject, TOURNAMENTS_SUBJECT};
use futures::StreamExt;
use tokio::time::Instant;

use crate::deadline::within;
use crate::lobby::Matchmaker;

/// Standings kept in a view: pages past these are read on demand.
pub const STANDINGS_KEPT: u32 = 200;
/// A view older than this is read again even without a notice.
const MAX_AGE: Duration = Duration::from_secs(5);
/// A view nobody asked for in this long is dropped.
const UNWATCHED: Duration = Duration::from_secs(60);
const MATCHMAKER: &str = "matchmaker";

#[derive(Debug)]
struct Cached<T> {
    value: Option<(Arc<T>, Instant)>,
    stale: bool,
    asked: Instant,
}

impl<T> Cached<T> {
    fn new() -> Cached<T> {
        Cached { value: None, stale: true, asked: Instant::now() }
    }

    fn fresh(&self) -> Option<Arc<T>> {
        let (value, read) = self.value.as_ref()?;
        (!self.stale && read.elapsed() < MAX_AGE).then(|| value.clone())
    }
}

#[derive(Debug, Default)]
pub struct TournamentViews {
    views: Mutex<HashMap<String, Cached<Tournament>>>,
    list: Mutex<Option<Cached<TournamentList>>>,
}

/// A view's `now_ms` carried forward to now, so countdowns stay true
/// however old the read.
fn aged(view: &Tournament, read: Instant) -> Tournament {
    let mut view = view.clone();
    view.now_ms += read.elapsed().as_millis() as u64;
    view
}

impl TournamentViews {
    /// The tournament `id` with its top standings.
    pub async fn view(
        self: &Arc<Self>,
        bus: &Arc<dyn EventBus>,
        matchmaker: &Matchmaker,
        timeout: Duration,
        id: &str,
    ) -> Result<Tournament, ServiceError> {
        let subscribe = {
            let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
            let first = !views.contains_key(id);
            let entry = views.entry(id.to_owned()).or_insert_with(Cached::new);
            entry.asked = Instant::now();
            if let (Some(view), Some((_, read))) = (entry.fresh(), entry.value.as_ref()) {
                return Ok(aged(&view, *read));
            }
            first
        };
        if subscribe {
            self.listen(bus, tournament_subject(id), Some(id.to_owned()));
        }
        let request = GetTournamentRequest {
            tournament_id: id.to_owned(),
            from_rank: 1,
            count: STANDINGS_KEPT,
            player_id: String::new(),
        };
        let view = within(timeout, MATCHMAKER, matchmaker.client()?.get_tournament(request)).await?;
        let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = views.get_mut(id) {
            entry.value = Some((Arc::new(view.clone()), Instant::now()));
            entry.stale = false;
        }
        Ok(view)
    }

    /// Every tournament listed, without standings.
    pub async fn list(
        self: &Arc<Self>,
        bus: &Arc<dyn EventBus>,
        matchmaker: &Matchmaker,
        timeout: Duration,
    ) -> Result<Vec<Tournament>, ServiceError> {
        let subscribe = {
            let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
            let first = list.is_none();
            let entry = list.get_or_insert_with(Cached::new);
            if let (Some(listed), Some((_, read))) = (entry.fresh(), entry.value.as_ref()) {
                return Ok(listed.tournaments.iter().map(|t| aged(t, *read)).collect());
            }
            first
        };
        if subscribe {
            self.listen(bus, TOURNAMENTS_SUBJECT.to_owned(), None);
        }
        let listed =
            within(timeout, MATCHMAKER, matchmaker.client()?.list_tournaments(ListTournamentsRequest {})).await?;
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = list.as_mut() {
            entry.value = Some((Arc::new(listed.clone()), Instant::now()));
            entry.stale = false;
        }
        Ok(listed.tournaments)
    }

    /// Marks the view (`Some(id)`) or the list (`None`) stale whenever a
    /// notice comes on `subject`; ends when the view is dropped.
    fn listen(self: &Arc<Self>, bus: &Arc<dyn EventBus>, subject: String, id: Option<String>) {
        let (bus, views) = (bus.clone(), Arc::downgrade(self));
        tokio::spawn(async move {
            let mut notices = match bus.subscribe(&subject).await {
                Ok(notices) => notices,
                Err(error) => {
                    // Views still come back within their age.
                    return tracing::debug!(%subject, %error, "not listening for tournament changes");
                }
            };
            let mut sweep = tokio::time::interval(UNWATCHED / 4);
            loop {
                tokio::select! {
                    notice = notices.next() => {
                        if notice.is_none() || !mark_stale(&views, id.as_deref()) {
                            break;
                        }
                    }
                    _ = sweep.tick() => {
                        if !still_watched(&views, id.as_deref()) {
                            break;
                        }
                    }
                }
            }
        });
    }
}

/// False once the view is gone (nothing left to mark).
fn mark_stale(views: &Weak<TournamentViews>, id: Option<&str>) -> bool {
    let Some(views) = views.upgrade() else { return false };
    match id {
        Some(id) => match views.views.lock().unwrap_or_else(PoisonError::into_inner).get_mut(id) {
            Some(entry) => {
                entry.stale = true;
                true
            }
            None => false,
        },
        None => {
            if let Some(list) = views.list.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
                list.stale = true;
            }
            true
        }
    }
}

/// Drops a view nobody asked for lately; false when it is gone.
fn still_watched(views: &Weak<TournamentViews>, id: Option<&str>) -> bool {
    let Some(views) = views.upgrade() else { return false };
    let Some(id) = id else { return true };
    let mut map = views.views.lock().unwrap_or_else(PoisonError::into_inner);
    match map.get(id) {
        Some(entry) if entry.asked.elapsed() < UNWATCHED => true,
        _ => {
            map.remove(id);
            false
        }
    }
}
