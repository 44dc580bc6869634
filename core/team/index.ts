// The team area's public face: the operator's team registry (create, plans, suspension, trust),
// the team's own profile (GET/PATCH /team), its members, and its standing and allowance — which
// the sending areas ask before they accept mail or add a domain or webhook endpoint; and the
// brand kit's uploaded images, which the public router serves.
export { teamsService, type TeamsDeps, type TeamsService } from './operator.js';
export { teamService, type TeamDeps, type TeamService } from './service.js';
export { membersService, memberRoles, type MemberInput, type MembersService, type MemberView } from './members.js';
export { planCatalog, checkPlanLimit, defaultPlanCode, type Plan, type PlanCatalog, type PlanLimits } from './plans.js';
export { sendAllowance, dayPeriod, monthPeriod, type DailyLimit, type DailyLimitReason, type SendAllowance } from './allowance.js';
export { assertMaySend, leftSandbox, riskStateOf, tierNames, type RiskState, type SendingStanding, type NextUnlock } from './standing.js';
export { sampleAllBillableContacts, sampleBillableContacts, type SendUsage } from './usage.js';
export { type TeamView, type TeamSummary, type TeamPlanLimits } from './view.js';
export { type TeamPatchInput } from './profile.js';
export { type PostalAddress, type PostalAddressInput, isCountryCode } from './address.js';
export { brandFonts, buttonStyles, defaultBrandKit, type BrandKit, type BrandKitInput } from './brand-kit.js';
export { brandKitUploads, hostedUploadsPath, type BrandKitUploadsDeps, type BrandKitUploadsService, type BrandKitUploadView, type HostedImage } from './uploads.js';
export { teamRetentionWindows } from './retention.js';
export { brandKitView } from './brand-kit.js';
export { parseBrandKit } from './brand-kit.js';
