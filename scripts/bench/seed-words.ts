/**
 * The words the bench seeds make product and bundle names of (catalog-seed.ts, search-seed.ts):
 * events, kinds of coverage and plan tiers. A change here changes the seeded data: bump the
 * SEED_VERSION of each seed that uses the list, so an older seed is replaced instead of reused.
 */

/** Events a product covers (the first word of a seeded product name). */
export const SEED_EVENTS = [
  'Wedding',
  'Special Event',
  'Concert',
  'Festival',
  'Trade Show',
  'Birthday Party',
  'Corporate Retreat',
  'Charity Gala',
  'Sports Tournament',
  'Food Truck',
  'Farmers Market',
  'Art Fair',
  'Conference',
  'Graduation',
  'Family Reunion',
  'Fun Run',
  'Craft Fair',
  'Film Shoot',
  'Pop-Up Shop',
  'Yoga Class',
  'Fitness Bootcamp',
  'Photography Session',
  'Dance Recital',
  'Car Show',
  'Rodeo',
  'Holiday Market',
  'Block Party',
  'Fundraiser',
  'Quinceañera',
  'Anniversary Party',
  'Music Lesson',
  'Wine Tasting',
  'Film Festival',
  'Golf Outing',
];
/** Kinds of coverage (the rest of a seeded product name). */
export const SEED_COVERAGES = [
  'General Liability',
  'Liquor Liability',
  'Event Cancellation',
  'Equipment Breakdown',
  'Property Damage',
  'Vendor Liability',
  'Host Liquor',
  'Participant Accident',
  'Inland Marine',
  'Weather Protection',
  'Hired Auto',
  'Professional Liability',
  'Umbrella',
  'Cyber Liability',
  'Tent and Stage',
  'Spectator Injury',
];
/** Plan tiers. */
export const SEED_TIERS = ['Basic', 'Standard', 'Plus', 'Premier', 'Essential', 'Complete', 'Select', 'Elite'];
