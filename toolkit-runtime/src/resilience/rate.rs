//! Rate limits: [`Rates`], governor's GCRA limiters, one for the source and one keyed by person.
//! A call over a rate is refused at once with the time until it would pass; it is never sent.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::layer::Layer;
use super::settings::{Rate, Resilience};

/// People remembered before those whose limiter is full again are forgotten.
const PEOPLE_KEPT: usize = 4096;

/// The source's limiter and the people's.
#[derive(Debug)]
pub(crate) struct Rates {
    source: Option<DefaultDirectRateLimiter>,
    people: Option<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

/// The quota of `rate`; `None` for a zero rate or period, which `Resilience::check` refuses.
fn quota(rate: &Rate) -> Option<Quota> {
    let calls = NonZeroU32::new(rate.calls)?;
    let burst = rate.burst.and_then(NonZeroU32::new).unwrap_or(calls);
    let period = rate.per.checked_div(calls.get())?;
    Some(Quota::with_period(period)?.allow_burst(burst))
}

impl Rates {
    pub(crate) fn new(settings: &Resilience) -> Self {
        Self {
            source: settings
                .rate
                .as_ref()
                .and_then(quota)
                .map(RateLimiter::direct),
            people: settings
                .rate_per_person
                .as_ref()
                .and_then(quota)
                .map(RateLimiter::keyed),
            clock: DefaultClock::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.source.is_none() && self.people.is_none()
    }

    /// Takes one call of `person` (when known) off the rates; the layer that refused it and how
    /// long until it would pass, when one does. A person's rate is taken first, so that one
    /// person over theirs spends nothing of everyone's.
    pub(crate) fn take(&self, person: Option<&str>) -> Result<(), (Layer, Duration)> {
        if let (Some(people), Some(person)) = (&self.people, person) {
            let taken = people.check_key(&person.to_owned());
            if people.len() > PEOPLE_KEPT {
                people.retain_recent();
            }
            taken.map_err(|not_until| {
                (
                    Layer::RatePerPerson,
                    not_until.wait_time_from(self.clock.now()),
                )
            })?;
        }
        if let Some(source) = &self.source {
            source
                .check()
                .map_err(|not_until| (Layer::Rate, not_until.wait_time_from(self.clock.now())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_person_has_their_own_rate_and_everyone_shares_one() {
        let rates = Rates::new(
            &Resilience::new()
                .rate(Rate::new(3, Duration::from_secs(60)))
                .rate_per_person(Rate::new(2, Duration::from_secs(60))),
        );
        assert!(rates.take(Some("alice")).is_ok());
        assert!(rates.take(Some("alice")).is_ok());
        let refused = rates.take(Some("alice")).err();
        assert_eq!(refused.map(|(layer, _)| layer), Some(Layer::RatePerPerson));
        assert!(refused.is_some_and(|(_, wait)| wait > Duration::from_secs(20)));
        // Alice's refused call took nothing of the source's rate: bob has its last call.
        assert!(rates.take(Some("bob")).is_ok());
        assert_eq!(
            rates.take(Some("carol")).err().map(|(layer, _)| layer),
            Some(Layer::Rate)
        );
        assert!(quota(&Rate::new(0, Duration::from_secs(1))).is_none());
        assert!(quota(&Rate::new(1, Duration::ZERO)).is_none());
    }
}
