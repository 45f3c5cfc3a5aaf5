; Tauri's NSIS installer hooks (bundle > windows > nsis > installerHooks): the `tether` CLI is
; installed beside the app (scripts/package-desktop puts it in the bundle's resources), and its
; folder is put on the user's PATH, so `tether` works in a new terminal. The uninstaller takes it
; off again. PowerShell edits the user's PATH (NSIS has no list functions; SetEnvironmentVariable
; also tells running programs that the environment changed).

!macro NSIS_HOOK_POSTINSTALL
  nsExec::Exec `powershell -NoProfile -NonInteractive -Command "$$d = '$INSTDIR'; $$p = [Environment]::GetEnvironmentVariable('Path', 'User'); $$l = @($$p -split ';' | Where-Object { $$_ -and $$_ -ne $$d }); [Environment]::SetEnvironmentVariable('Path', (($$l + $$d) -join ';'), 'User')"`
!macroend

!macro NSIS_HOOK_PREUNINSTALL
  nsExec::Exec `powershell -NoProfile -NonInteractive -Command "$$d = '$INSTDIR'; $$p = [Environment]::GetEnvironmentVariable('Path', 'User'); $$l = @($$p -split ';' | Where-Object { $$_ -and $$_ -ne $$d }); [Environment]::SetEnvironmentVariable('Path', ($$l -join ';'), 'User')"`
!macroend
