//! Administration: users (create, activate or deactivate, unblock after lockout, the admin
//! role), groups and prescriptions (enlistments with their end date), the scheduler's job
//! queue and the audit trail. No handler checks a role: the store's reads and the actions they
//! call do (`AdminTask`), the same the JSON API asks.

mod audit;
mod erasure;
mod groups;
mod jobs;
mod user_edit;
mod users;

pub use audit::{AuditQuery, AuditRow, audit_export, audit_trail};
pub use erasure::{EraseForm, HoldForm, erasure_page, request_erasure, set_legal_hold};
pub use groups::{
    EndForm, EnlistForm, EnlistmentRow, ExtendForm, GroupRow, NewGroupForm, StaffForm,
    create_group, end_enlistment, enlist, extend_enlistment, groups, remove_staff,
};
pub use jobs::{JobQuery, JobRow, UpcomingRow, jobs, make_due, upcoming};
pub use user_edit::{edit_user, edit_user_form};
pub use users::{
    NewUserForm, Toggle, UserRow, UsersQuery, create_user, reset_password, set_activation,
    set_admin, unblock, users,
};
