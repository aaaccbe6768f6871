pub mod srv {
    super::super::service! { "std_srvs", Trigger {
        request { structure_needs_at_least_one_member: u8 }
        response { success: bool, message: String }
    } }
    super::super::service! { "std_srvs", SetBool {
        request { data: bool }
        response { success: bool, message: String }
    } }
}
