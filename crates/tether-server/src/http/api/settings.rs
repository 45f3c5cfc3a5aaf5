//! The settings page: what is saved next to what the daemon uses, and saving a change.

use axum::Json;
use axum::extract::State;
use tether_core::ops::settings as op;
use tether_core::settings::{SettingsPatch, SettingsView};

use crate::http::auth::Person;
use crate::http::error::{ApiResult, blocking};
use crate::state::Ctx;

pub(crate) async fn get(State(ctx): State<Ctx>) -> ApiResult<SettingsView> {
    blocking(&ctx, op::get).await
}

pub(crate) async fn update(
    State(ctx): State<Ctx>,
    Person(me): Person,
    Json(p): Json<SettingsPatch>,
) -> ApiResult<SettingsView> {
    blocking(&ctx, move |t| op::update(t, &me, &p)).await
}
