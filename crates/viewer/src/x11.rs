//! Xlib ends the whole process when its connection to the X server breaks (the server quit,
//! the remote session closed). The viewer must not take the simulation down with it: this
//! handler says so once and parks the viewer's thread for good instead, the one that met the
//! broken connection.
use std::ffi::{c_int, c_void};

type IoErrorHandler = unsafe extern "C" fn(*mut c_void) -> c_int;
type SetIoErrorHandler = unsafe extern "C" fn(Option<IoErrorHandler>) -> Option<IoErrorHandler>;

unsafe extern "C" fn on_broken_connection(_display: *mut c_void) -> c_int {
    log::error!("viewer: the connection to the display broke; no window, the simulation runs on");
    loop {
        std::thread::park();
    }
}

/// Installs the handler in the libX11 that winit opened (call after the event loop exists).
pub fn survive_a_lost_display() {
    // SAFETY: dlopen/dlsym with NUL-terminated names; the symbol has Xlib's documented
    // signature, and the handler never returns (Xlib would exit if it did).
    unsafe {
        let library = libc::dlopen(c"libX11.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if library.is_null() {
            return;
        }
        let symbol = libc::dlsym(library, c"XSetIOErrorHandler".as_ptr());
        if !symbol.is_null() {
            let set: SetIoErrorHandler = std::mem::transmute(symbol);
            set(Some(on_broken_connection));
        }
        libc::dlclose(library);
    }
}
