//! Who is told of an event: the rules of the fan-out, applied to what the store loaded for a
//! batch of events, so that they can be read and tested apart from the queries.

use std::collections::{BTreeSet, HashMap};

use super::id::Id;
use super::notification::{EventKind, KindSet};

/// An event as the rules see it.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The patient it is about.
    pub patient: Id,
    /// Who caused it, when a person did.
    pub actor: Option<Id>,
    /// The groups whose staff see what it is about: the groups of its measurement, or the group
    /// its periodic report was made for.
    pub groups: BTreeSet<Id>,
    /// For `measurement.analysed`: the result is urgent, and a `result.urgent` event about the
    /// same measurement tells the staff of it.
    pub urgent: bool,
}

/// A webhook endpoint as the rules see it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Its id.
    pub id: Id,
    /// The group it belongs to.
    pub group: Id,
    /// The kinds it is subscribed to.
    pub events: KindSet,
    /// Whether it still receives (it is disabled after repeated failures).
    pub enabled: bool,
}

/// The people and endpoints a batch of events may reach.
#[derive(Debug, Clone, Default)]
pub struct Audience {
    /// The staff of each group.
    pub staff: HashMap<Id, Vec<Id>>,
    /// The kinds each group lets reach its staff; a group missing here never chose, and lets
    /// every kind through.
    pub staff_events: HashMap<Id, KindSet>,
    /// Every administrator.
    pub administrators: Vec<Id>,
    /// Whether each account is active. An account missing here (gone, or out of the
    /// notifier's sight) is told nothing, like a deactivated one.
    pub active: HashMap<Id, bool>,
    /// The webhook endpoints of the groups.
    pub endpoints: Vec<Endpoint>,
}

/// Whom and what an event reaches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Told {
    /// The readers, each once, in the order of their ids.
    pub readers: Vec<Id>,
    /// The ids of the webhook endpoints, in the order of [`Audience::endpoints`].
    pub endpoints: Vec<Id>,
}

impl Audience {
    /// Whom and what `event` reaches. Readers: the patient (unless the kind is for staff
    /// only); the staff of the event's groups whose settings let the kind through (an urgent
    /// analysis only as `result.urgent`, where the group takes that kind); every
    /// administrator for the kinds that are theirs. Never the actor, never an account that is
    /// not active. Endpoints: the enabled ones of the event's groups subscribed to its kind.
    pub fn told(&self, event: &Event) -> Told {
        let mut readers = BTreeSet::new();
        if event.kind.reaches_patient() {
            readers.insert(event.patient);
        }
        for group in &event.groups {
            // An urgent result reaches the staff once, as urgent, where the group takes urgent
            // results; the analysis' own event is then the patient's.
            let told_as_urgent = event.kind == EventKind::MeasurementAnalysed
                && event.urgent
                && self.lets_staff_know(group, EventKind::ResultUrgent);
            if !told_as_urgent && self.lets_staff_know(group, event.kind) {
                readers.extend(self.staff.get(group).into_iter().flatten().copied());
            }
        }
        if event.kind.reaches_administrators() {
            readers.extend(self.administrators.iter().copied());
        }
        if let Some(actor) = event.actor {
            readers.remove(&actor);
        }
        readers.retain(|id| self.active.get(id).copied().unwrap_or(false));
        let endpoints = self
            .endpoints
            .iter()
            .filter(|e| {
                e.enabled && event.groups.contains(&e.group) && e.events.contains(event.kind)
            })
            .map(|e| e.id)
            .collect();
        Told {
            readers: readers.into_iter().collect(),
            endpoints,
        }
    }

    /// Whether `group` lets `kind` reach its staff.
    fn lets_staff_know(&self, group: &Id, kind: EventKind) -> bool {
        self.staff_events
            .get(group)
            .is_none_or(|kinds| kinds.contains(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<const N: usize>() -> [Id; N] {
        std::array::from_fn(|_| Id::generate())
    }

    fn event(kind: EventKind, patient: Id, groups: &[Id]) -> Event {
        Event {
            kind,
            patient,
            actor: None,
            groups: groups.iter().copied().collect(),
            urgent: false,
        }
    }

    /// An audience where `people` are active and each of `staff` is the staff of its group.
    fn audience(people: &[Id], staff: &[(Id, &[Id])]) -> Audience {
        Audience {
            staff: staff.iter().map(|(g, s)| (*g, s.to_vec())).collect(),
            active: people.iter().map(|p| (*p, true)).collect(),
            ..Audience::default()
        }
    }

    fn sorted(mut ids: Vec<Id>) -> Vec<Id> {
        ids.sort();
        ids
    }

    fn kinds(kinds: &[EventKind]) -> KindSet {
        let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        KindSet::from_stored(&names.join(" "))
    }

    fn endpoint(id: Id, group: Id, events: &[EventKind], enabled: bool) -> Endpoint {
        Endpoint {
            id,
            group,
            events: kinds(events),
            enabled,
        }
    }

    #[test]
    fn the_patient_is_told_of_the_kinds_that_reach_patients() {
        let [patient] = ids();
        let audience = audience(&[patient], &[]);
        for kind in [
            EventKind::MeasurementAnalysed,
            EventKind::MeasurementReportReady,
            EventKind::PeriodicReportCreated,
            EventKind::MeasurementReviewed,
        ] {
            let told = audience.told(&event(kind, patient, &[]));
            assert_eq!(told.readers, vec![patient], "{kind}");
        }
    }

    #[test]
    fn kinds_for_staff_only_do_not_reach_the_patient() {
        let [patient, physician, group] = ids();
        let audience = audience(&[patient, physician], &[(group, &[physician])]);
        let told = audience.told(&event(EventKind::ResultUrgent, patient, &[group]));
        assert_eq!(told.readers, vec![physician]);
        let told = audience.told(&event(EventKind::WebhookDisabled, patient, &[]));
        assert!(told.readers.is_empty());
    }

    #[test]
    fn an_urgent_result_reaches_the_staff_once_as_urgent() {
        let [patient, physician, group] = ids();
        let mut audience = audience(&[patient, physician], &[(group, &[physician])]);
        let analysed = Event {
            urgent: true,
            ..event(EventKind::MeasurementAnalysed, patient, &[group])
        };
        let urgent = event(EventKind::ResultUrgent, patient, &[group]);
        assert_eq!(audience.told(&analysed).readers, vec![patient]);
        assert_eq!(audience.told(&urgent).readers, vec![physician]);
        // A group that takes analyses but not urgent results still hears of the analysis.
        audience
            .staff_events
            .insert(group, kinds(&[EventKind::MeasurementAnalysed]));
        assert_eq!(
            audience.told(&analysed).readers,
            sorted(vec![patient, physician])
        );
        assert!(audience.told(&urgent).readers.is_empty());
    }

    #[test]
    fn staff_are_told_only_of_the_kinds_their_group_lets_through() {
        let [patient, physician, group] = ids();
        let mut audience = audience(&[patient, physician], &[(group, &[physician])]);
        audience
            .staff_events
            .insert(group, kinds(&[EventKind::MeasurementReviewed]));
        let reviewed = audience.told(&event(EventKind::MeasurementReviewed, patient, &[group]));
        assert_eq!(reviewed.readers, sorted(vec![patient, physician]));
        let analysed = audience.told(&event(EventKind::MeasurementAnalysed, patient, &[group]));
        assert_eq!(analysed.readers, vec![patient]);
        // A group that lets nothing through leaves even urgent results to no one.
        audience.staff_events.insert(group, KindSet::default());
        let urgent = audience.told(&event(EventKind::ResultUrgent, patient, &[group]));
        assert!(urgent.readers.is_empty());
    }

    #[test]
    fn a_group_that_never_chose_lets_every_kind_reach_its_staff() {
        let [patient, physician, group] = ids();
        let audience = audience(&[patient, physician], &[(group, &[physician])]);
        for kind in EventKind::PUBLIC {
            let told = audience.told(&event(kind, patient, &[group]));
            assert!(told.readers.contains(&physician), "{kind}");
        }
    }

    #[test]
    fn administrators_are_told_only_of_disabled_webhooks() {
        let [patient, admin, other_admin] = ids();
        let mut audience = audience(&[patient, admin, other_admin], &[]);
        audience.administrators = vec![admin, other_admin];
        let disabled = audience.told(&event(EventKind::WebhookDisabled, patient, &[]));
        assert_eq!(disabled.readers, sorted(vec![admin, other_admin]));
        for kind in EventKind::PUBLIC {
            let told = audience.told(&event(kind, patient, &[]));
            assert!(!told.readers.contains(&admin), "{kind}");
        }
    }

    #[test]
    fn the_actor_is_never_told() {
        let [patient, physician, colleague, admin, group] = ids();
        let mut audience = audience(
            &[patient, physician, colleague, admin],
            &[(group, &[physician, colleague])],
        );
        audience.administrators = vec![admin];
        let mut reviewed = event(EventKind::MeasurementReviewed, patient, &[group]);
        reviewed.actor = Some(physician);
        assert_eq!(
            audience.told(&reviewed).readers,
            sorted(vec![patient, colleague])
        );
        let mut analysed = event(EventKind::MeasurementAnalysed, patient, &[group]);
        analysed.actor = Some(patient);
        assert_eq!(
            audience.told(&analysed).readers,
            sorted(vec![physician, colleague])
        );
        let mut disabled = event(EventKind::WebhookDisabled, patient, &[]);
        disabled.actor = Some(admin);
        assert!(audience.told(&disabled).readers.is_empty());
    }

    #[test]
    fn deactivated_and_unknown_accounts_are_never_told() {
        let [patient, physician, unknown, admin, group] = ids();
        let mut audience = audience(&[patient], &[(group, &[physician, unknown])]);
        audience.active.insert(physician, false);
        audience.active.insert(admin, false);
        audience.administrators = vec![admin];
        let told = audience.told(&event(EventKind::MeasurementAnalysed, patient, &[group]));
        assert_eq!(told.readers, vec![patient]);
        audience.active.insert(patient, false);
        let told = audience.told(&event(EventKind::MeasurementAnalysed, patient, &[group]));
        assert!(told.readers.is_empty());
        let told = audience.told(&event(EventKind::WebhookDisabled, patient, &[]));
        assert!(told.readers.is_empty());
    }

    #[test]
    fn an_event_of_several_groups_reaches_the_staff_of_each_that_lets_it_through() {
        let [patient, a, b, c, outside, first, second, closed, other] = ids();
        let mut audience = audience(
            &[patient, a, b, c, outside],
            &[
                (first, &[a]),
                (second, &[b]),
                (closed, &[c]),
                (other, &[outside]),
            ],
        );
        audience.staff_events.insert(closed, KindSet::default());
        let told = audience.told(&event(
            EventKind::MeasurementAnalysed,
            patient,
            &[first, second, closed],
        ));
        assert_eq!(told.readers, sorted(vec![patient, a, b]));
    }

    #[test]
    fn someone_reached_several_ways_is_told_once() {
        let [patient, physician, first, second] = ids();
        // The physician is staff of both groups, and the patient staff of one of them too.
        let audience = audience(
            &[patient, physician],
            &[(first, &[physician, patient]), (second, &[physician])],
        );
        let told = audience.told(&event(
            EventKind::MeasurementAnalysed,
            patient,
            &[first, second],
        ));
        assert_eq!(told.readers, sorted(vec![patient, physician]));
        let [admin] = ids();
        let mut audience = audience.clone();
        audience.active.insert(admin, true);
        audience.administrators = vec![admin, admin];
        let told = audience.told(&event(EventKind::WebhookDisabled, patient, &[]));
        assert_eq!(told.readers, vec![admin]);
    }

    #[test]
    fn endpoints_are_the_enabled_ones_of_the_events_groups_subscribed_to_its_kind() {
        let [patient, group, other_group] = ids();
        let [all, reviews, disabled, elsewhere, urgent] = ids();
        let mut audience = audience(&[patient], &[]);
        audience.endpoints = vec![
            endpoint(urgent, group, &[EventKind::ResultUrgent], true),
            endpoint(all, group, &EventKind::PUBLIC, true),
            endpoint(reviews, group, &[EventKind::MeasurementReviewed], true),
            endpoint(disabled, group, &EventKind::PUBLIC, false),
            endpoint(elsewhere, other_group, &EventKind::PUBLIC, true),
        ];
        let analysed = audience.told(&event(EventKind::MeasurementAnalysed, patient, &[group]));
        assert_eq!(analysed.endpoints, vec![all]);
        // In the order they were given.
        let urgent_told = audience.told(&event(EventKind::ResultUrgent, patient, &[group]));
        assert_eq!(urgent_told.endpoints, vec![urgent, all]);
        let both = audience.told(&event(
            EventKind::MeasurementReviewed,
            patient,
            &[group, other_group],
        ));
        assert_eq!(both.endpoints, vec![all, reviews, elsewhere]);
        let no_groups = audience.told(&event(EventKind::MeasurementAnalysed, patient, &[]));
        assert!(no_groups.endpoints.is_empty());
    }
}
