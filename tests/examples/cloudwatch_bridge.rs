//! Runs the CloudWatch protocol bridge (`headroom_tests::cbor_bridge`) in front of moto until
//! stopped, so `headroom` commands that read CloudWatch can be tried against moto by hand:
//!
//! ```text
//! moto_server -H 127.0.0.1 -p 5055 &
//! AWS_ENDPOINT_URL=http://127.0.0.1:5055 cargo run -p headroom-tests --example cloudwatch_bridge
//! # prints http://127.0.0.1:PORT; then, in another shell:
//! AWS_ENDPOINT_URL=http://127.0.0.1:5055 AWS_ENDPOINT_URL_CLOUDWATCH=http://127.0.0.1:PORT \
//!     headroom plan suggest --plan base.toml --days 14
//! ```

use headroom_tests::cbor_bridge::CborBridge;

fn main() {
    let bridge = CborBridge::start(headroom_tests::moto());
    println!("{}", bridge.url());
    loop {
        std::thread::park();
    }
}
