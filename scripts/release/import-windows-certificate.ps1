# Imports the code-signing certificate (base64 .pfx in WINDOWS_CERTIFICATE) into the current
# user's store, as Tauri's Windows signing guide does; the bundler then signs with the
# certificate named by WINDOWS_CERTIFICATE_THUMBPRINT (scripts/package-desktop).
$ErrorActionPreference = 'Stop'
$pfx = Join-Path $env:RUNNER_TEMP 'certificate.pfx'
[IO.File]::WriteAllBytes($pfx, [Convert]::FromBase64String($env:WINDOWS_CERTIFICATE))
$password = ConvertTo-SecureString -String $env:WINDOWS_CERTIFICATE_PASSWORD -Force -AsPlainText
Import-PfxCertificate -FilePath $pfx -CertStoreLocation Cert:\CurrentUser\My -Password $password
Remove-Item $pfx
